#!/usr/bin/env bash
# A rank that fails ends the whole job: halo-train under mpirun -np 3, with rank 0 unable to write
# its epoch-3 checkpoint (the checkpoint path is a file), must exit non-zero within the time-out
# with rank 0's message; a part whose file fails its checksum is refused before training; and
# Ctrl-C to mpirun stops every rank cleanly after the same epoch, with a checkpoint.
# Usage: failing_rank_test.sh BUILD_DIR MPIEXEC
set -u
build=$1
mpiexec=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1

"$build/bin/halo-convert" synth sbm "$scratch/sbm" --nodes 3000 --features 16 --seed 2 -q || exit 1
"$build/bin/halo-partition" "$scratch/sbm" --parts 3 -o "$scratch/parts" -q > /dev/null || exit 1
touch "$scratch/not-a-directory"

expect_failure() {  # NAME PATTERN ARGS...: the job must fail, in time, saying PATTERN
  local name=$1 pattern=$2
  shift 2
  local start=$SECONDS
  timeout 120 "$mpiexec" -np 3 --oversubscribe "$build/bin/halo-train" --partitions "$scratch/parts" \
    --epochs 10 --threads 1 -q "$@" > "$scratch/out" 2>&1
  local code=$?
  if [[ $code -eq 0 || $code -eq 124 ]]; then
    echo "FAIL ($name): exit code $code after $((SECONDS - start)) s (0 = no failure, 124 = hung)"
    cat "$scratch/out"
    exit 1
  fi
  if ! grep -q -- "$pattern" "$scratch/out"; then
    echo "FAIL ($name): the output does not say '$pattern'"
    cat "$scratch/out"
    exit 1
  fi
  echo "ok ($name): exit code $code after $((SECONDS - start)) s"
}

expect_failure "a rank throws in epoch 3" "rank 0 of 3" \
  --checkpoint "$scratch/not-a-directory/run" --checkpoint-every 3

# Corrupt one byte of part 1's features: rank 1 refuses it before training.
features="$scratch/parts/part-0001/node_feat.npy"
size=$(stat -c %s "$features")
printf '\x7f' | dd of="$features" bs=1 seek=$((size - 1)) conv=notrunc status=none
expect_failure "a part fails its checksum" "rank 1 of 3"
grep -q "node_feat.npy" "$scratch/out" || { echo "FAIL: the message does not name the file"; cat "$scratch/out"; exit 1; }

# A world whose size differs from the partition's part count is refused.
timeout 60 "$mpiexec" -np 2 --oversubscribe "$build/bin/halo-train" --partitions "$scratch/parts" -q \
  > "$scratch/out" 2>&1 && { echo "FAIL: 2 ranks trained a 3-part partition"; exit 1; }
grep -q "mpirun -np 3" "$scratch/out" || { echo "FAIL: no hint to run with 3 ranks"; cat "$scratch/out"; exit 1; }
echo "ok (world size differs from the part count)"

# Ctrl-C to mpirun (which forwards SIGTERM to the ranks): every rank stops after the same epoch,
# rank 0 saves the checkpoint and says how to resume. (The partition again: part 1 was damaged above.)
"$build/bin/halo-partition" "$scratch/sbm" --parts 3 -o "$scratch/parts" --force -q > /dev/null || exit 1
"$mpiexec" -np 3 --oversubscribe "$build/bin/halo-train" --partitions "$scratch/parts" --epochs 100000 \
  --threads 1 --checkpoint "$scratch/ckpt" > "$scratch/out" 2>&1 &
job=$!  # mpirun itself (a timeout(1) wrapper would turn the SIGINT into its own SIGTERM)
until grep -q "epoch 3 |" "$scratch/out" || ! kill -0 $job 2>/dev/null; do sleep 0.1; done
kill -INT $job
for _ in $(seq 600); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
if kill -0 $job 2>/dev/null; then
  kill -9 $job; echo "FAIL (Ctrl-C): the job still ran 60 s after SIGINT"; cat "$scratch/out"; exit 1
fi
wait $job
code=$?
if [[ $code -eq 0 ]]; then
  echo "FAIL (Ctrl-C): exit code 0, as if it had not been stopped"; cat "$scratch/out"; exit 1
fi
grep -q "stopped: SIGTERM after epoch" "$scratch/out" && grep -q -- "--resume to go on" "$scratch/out" &&
  [[ -f "$scratch/ckpt/run-0000/manifest.json" ]] ||
  { echo "FAIL (Ctrl-C): no clean stop with a checkpoint"; cat "$scratch/out"; exit 1; }
echo "ok (Ctrl-C to mpirun stops every rank after one epoch, with a checkpoint; exit code $code)"
