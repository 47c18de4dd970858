#!/usr/bin/env bash
# A stalled rank ends the job instead of hanging it: halo-train under mpirun -np 3 with one rank
# stopped (SIGSTOP, as a stuck or swapped-out node would be) must end within its collective
# timeout (5 s here) plus a margin, non-zero, saying "no progress in a collective for 5 s", and the
# waiting ranks must not spin a core each meanwhile.
# Usage: stalled_rank_test.sh BUILD_DIR MPIEXEC
set -u
build=$1
mpiexec=$2
scratch=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
stopped=""
cleanup() {
  [ -n "$stopped" ] && kill -KILL "$stopped" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

"$build/bin/halo-convert" synth sbm "$scratch/sbm" --nodes 3000 --features 16 --seed 2 -q || exit 1
"$build/bin/halo-partition" "$scratch/sbm" --parts 3 -o "$scratch/parts" -q > /dev/null || exit 1

"$mpiexec" -np 3 --oversubscribe "$build/bin/halo-train" --partitions "$scratch/parts" --epochs 100000 \
  --threads 1 --collective-timeout 5 > "$scratch/out" 2>&1 &
job=$!
until grep -q "epoch 3 |" "$scratch/out" || ! kill -0 $job 2>/dev/null; do sleep 0.1; done
ranks=$(pgrep -f "halo-train --partitions $scratch/parts")
stopped=$(echo "$ranks" | tail -1)
[ -n "$stopped" ] || { echo "FAIL: no rank found to stop"; cat "$scratch/out"; exit 1; }
kill -STOP "$stopped"
start=$SECONDS
# The waiting ranks' CPU time over two seconds of their wait: polling with sleeps, not spinning.
waiting=$(echo "$ranks" | grep -v "^$stopped\$" | head -1)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
sleep 1
before=$(ticks "$waiting")
sleep 2
after=$(ticks "$waiting")
while kill -0 $job 2>/dev/null && [ $((SECONDS - start)) -lt 60 ]; do sleep 0.2; done
if kill -0 $job 2>/dev/null; then
  echo "FAIL: the job still runs $((SECONDS - start)) s after a rank was stopped (collective timeout 5 s)"
  kill -KILL $job
  cat "$scratch/out"
  exit 1
fi
wait $job
code=$?
elapsed=$((SECONDS - start))
[ $code -ne 0 ] || { echo "FAIL: exit code 0 with a stopped rank"; cat "$scratch/out"; exit 1; }
grep -q "no progress in a collective (.*) for 5 s" "$scratch/out" ||
  { echo "FAIL: the output does not say 'no progress in a collective ... for 5 s'"; cat "$scratch/out"; exit 1; }
grep -q "rank [0-9] of 3: no progress" "$scratch/out" ||
  { echo "FAIL: the message does not name the rank"; cat "$scratch/out"; exit 1; }
hz=$(getconf CLK_TCK)
busy=$(((after - before) * 100 / (2 * hz)))
echo "ok: exit code $code ${elapsed} s after rank pid $stopped was stopped; a waiting rank used ${busy} % of a core"
[ "$busy" -lt 50 ] || { echo "FAIL: a waiting rank spins (${busy} % of a core)"; exit 1; }
