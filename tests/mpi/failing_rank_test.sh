#!/usr/bin/env bash
# A rank that fails ends the whole job: halo-train under mpirun -np 3, with rank 0 unable to write
# its epoch-3 checkpoint (the checkpoint path is a file), must exit non-zero within the time-out
# with rank 0's message; and a part whose file fails its checksum is refused before training.
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
