#!/usr/bin/env bash
# halo-train --device cuda under mpirun -np 2: where this build has CUDA and NCCL and the machine
# two GPUs, it trains over NCCL (and rank 0 writes both ranks' predictions); anywhere else (no GPU, one GPU, no CUDA or NCCL in the build)
# every rank fails in time with its own one-line error and the job exits non-zero — an agreed
# failure, so no rank is cut short by MPI_Abort before it has said why.
# Usage: gpu_ranks_test.sh BUILD_DIR MPIEXEC
set -u
build=$1
mpiexec=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1

"$build/bin/halo-convert" synth sbm "$scratch/sbm" --nodes 2000 --features 16 --seed 2 -q || exit 1
"$build/bin/halo-partition" "$scratch/sbm" --parts 2 --method random -o "$scratch/parts" -q > /dev/null || exit 1

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
cuda_and_nccl=0
grep -q '^HALO_WITH_CUDA:BOOL=ON' "$build/CMakeCache.txt" && grep -q '^HALO_WITH_NCCL:BOOL=ON' "$build/CMakeCache.txt" &&
  cuda_and_nccl=1

start=$SECONDS
timeout 300 "$mpiexec" -np 2 --oversubscribe "$build/bin/halo-train" --partitions "$scratch/parts" --device cuda \
  --epochs 3 --threads 1 -q --json "$scratch/summary.json" --predictions "$scratch/predictions" > "$scratch/out" 2>&1
code=$?
if [[ $cuda_and_nccl -eq 1 && $gpus -ge 2 ]]; then
  if [[ $code -ne 0 ]]; then
    echo "FAIL: 2 ranks on $gpus GPUs did not train (exit code $code)"
    cat "$scratch/out"
    exit 1
  fi
  if ! grep -q '"device": "cuda:0"' "$scratch/summary.json"; then
    echo "FAIL: rank 0 did not train on cuda:0"
    cat "$scratch/summary.json"
    exit 1
  fi
  # Rank 0 gathered both ranks' predictions through NCCL: a .npy of 2000 rows.
  if ! head -c 128 "$scratch/predictions/run-0000/y_pred.npy" | grep -a -q "'shape': (2000, 1)"; then
    echo "FAIL: no predictions of the 2000 vertices in $scratch/predictions/run-0000/y_pred.npy"
    exit 1
  fi
  echo "ok: 2 ranks trained over NCCL on $gpus GPUs in $((SECONDS - start)) s"
  exit 0
fi
if [[ $code -eq 0 || $code -eq 124 ]]; then
  echo "FAIL: exit code $code after $((SECONDS - start)) s (0 = trained without 2 usable GPUs, 124 = hung)"
  cat "$scratch/out"
  exit 1
fi
for rank in 0 1; do
  lines=$(grep -c "^halo-train: error: rank $rank of 2: " "$scratch/out")
  if [[ $lines -ne 1 ]]; then
    echo "FAIL: rank $rank printed $lines error lines, expected 1"
    cat "$scratch/out"
    exit 1
  fi
done
if grep -q "MPI_ABORT" "$scratch/out"; then
  echo "FAIL: an agreed failure ended the job with MPI_Abort"
  cat "$scratch/out"
  exit 1
fi
reason=$(grep -m1 "^halo-train: error: rank 0 of 2: " "$scratch/out")
echo "ok: every rank failed in one line after $((SECONDS - start)) s ($gpus GPU(s), CUDA and NCCL built:" \
  "$cuda_and_nccl): $reason"
