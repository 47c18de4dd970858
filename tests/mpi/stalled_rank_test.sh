#!/usr/bin/env bash
# A stalled rank ends the job instead of hanging it: halo-train under mpirun -np 3 with one rank
# stopped (SIGSTOP, as a stuck or swapped-out node would be) must end within its collective
# timeout (5 s here) plus a margin, non-zero, saying "no progress in a collective for 5 s", and the
# waiting ranks must not spin a core each meanwhile. Where this build has CUDA and NCCL and the
# machine two GPUs, the same with --device cuda on 2 ranks: the waiting rank, stuck behind a
# collective its stopped peer never joins (in a download of the step's loss, say), must end too,
# through NcclCommunicator's watchdog or its own wait, naming the collective timeout.
# Usage: stalled_rank_test.sh BUILD_DIR MPIEXEC
set -u
build=$1
mpiexec=$2
scratch=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
stopped=""
cleanup() {
  [ -n "$stopped" ] && kill -KILL $stopped 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

# Starts halo-train on the partition $1 with $2 ranks and the extra arguments after them, writing
# to $scratch/out; sets `job` and, once epoch 3 is done, `ranks` (the ranks' pids).
start_job() {
  local parts=$1 np=$2
  shift 2
  "$mpiexec" -np "$np" --oversubscribe "$build/bin/halo-train" --partitions "$parts" --epochs 100000 --threads 1 \
    --collective-timeout 5 "$@" > "$scratch/out" 2>&1 &
  job=$!
  until grep -q "epoch 3 |" "$scratch/out" || ! kill -0 $job 2>/dev/null; do sleep 0.1; done
  ranks=$(pgrep -f "^$build/bin/halo-train --partitions $parts")
}

# Stops the job's last rank; sets `start`.
stop_a_rank() {
  local last
  last=$(echo "$ranks" | tail -1)
  [ -n "$last" ] || { echo "FAIL: no rank found to stop"; cat "$scratch/out"; exit 1; }
  kill -STOP "$last"
  stopped="$stopped $last"
  start=$SECONDS
}

# Waits for the job to end, at most 60 s after the stop; fails unless it ended non-zero.
expect_job_ends() {
  while kill -0 $job 2>/dev/null && [ $((SECONDS - start)) -lt 60 ]; do sleep 0.2; done
  if kill -0 $job 2>/dev/null; then
    echo "FAIL: the job still runs $((SECONDS - start)) s after a rank was stopped (collective timeout 5 s)"
    kill -KILL $job
    cat "$scratch/out"
    exit 1
  fi
  wait $job
  code=$?
  [ $code -ne 0 ] || { echo "FAIL: exit code 0 with a stopped rank"; cat "$scratch/out"; exit 1; }
}

"$build/bin/halo-convert" synth sbm "$scratch/sbm" --nodes 3000 --features 16 --seed 2 -q || exit 1
"$build/bin/halo-partition" "$scratch/sbm" --parts 3 -o "$scratch/parts" -q > /dev/null || exit 1

start_job "$scratch/parts" 3
stop_a_rank
# The waiting ranks' CPU time over two seconds of their wait: polling with sleeps, not spinning.
waiting=$(echo "$ranks" | head -1)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
sleep 1
before=$(ticks "$waiting")
sleep 2
after=$(ticks "$waiting")
expect_job_ends
grep -q "no progress in a collective (.*) for 5 s" "$scratch/out" ||
  { echo "FAIL: the output does not say 'no progress in a collective ... for 5 s'"; cat "$scratch/out"; exit 1; }
grep -q "rank [0-9] of 3: no progress" "$scratch/out" ||
  { echo "FAIL: the message does not name the rank"; cat "$scratch/out"; exit 1; }
hz=$(getconf CLK_TCK)
busy=$(((after - before) * 100 / (2 * hz)))
echo "ok: exit code $code $((SECONDS - start)) s after a rank was stopped; a waiting rank used ${busy} % of a core"
[ "$busy" -lt 50 ] || { echo "FAIL: a waiting rank spins (${busy} % of a core)"; exit 1; }

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if ! grep -q '^HALO_WITH_CUDA:BOOL=ON' "$build/CMakeCache.txt" || ! grep -q '^HALO_WITH_NCCL:BOOL=ON' "$build/CMakeCache.txt" ||
  [ "$gpus" -lt 2 ]; then
  echo "skipped the GPU pass: needs CUDA and NCCL in the build and 2 GPUs ($gpus visible)"
  exit 0
fi
"$build/bin/halo-partition" "$scratch/sbm" --parts 2 -o "$scratch/gpu-parts" -q > /dev/null || exit 1
start_job "$scratch/gpu-parts" 2 --device cuda
stop_a_rank
expect_job_ends
grep -q "collective timeout" "$scratch/out" ||
  { echo "FAIL: the GPU job's output does not name the collective timeout"; cat "$scratch/out"; exit 1; }
echo "ok: the GPU job exited with code $code $((SECONDS - start)) s after a rank was stopped"
