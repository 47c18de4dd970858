#!/usr/bin/env bash
# Installs the built halo into a scratch prefix, then builds and runs two outside projects against
# it: tests/install/consumer, which asks only for the CPU modules (find_package(halo COMPONENTS
# graph datasets)) with CUDA, MPI and NCCL made unfindable, and examples/embed, which links
# halo::halo and trains through train() (on cora when the shared datasets are there).
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
source_dir=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
test -f "$scratch/prefix/lib/cmake/halo/haloConfig.cmake"
test -f "$scratch/prefix/include/halo/graph/csr.hpp"
test -f "$scratch/prefix/include/halo/train/trainer.hpp"
test -f "$scratch/prefix/include/halo/train/layers/gcn_conv.hpp"

cmake -S "$source_dir/tests/install/consumer" -B "$scratch/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON \
      -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DCMAKE_DISABLE_FIND_PACKAGE_NCCL=ON >/dev/null
cmake --build "$scratch/consumer" >/dev/null
"$scratch/consumer/halo_consumer"

cmake -S "$source_dir/examples/embed" -B "$scratch/embed" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/embed" >/dev/null
cora="$source_dir/../shared/datasets/cora"
if [ -d "$cora" ]; then
  "$build_dir/bin/halo-convert" ogb "$cora" "$scratch/cora" -q
  "$scratch/embed/embed" "$scratch/cora" | tee "$scratch/embed.txt"
  # Kipf & Welling report 81.5 %; one seeded run of their recipe lands near it.
  python3 - "$scratch/embed.txt" <<'PY'
import re, sys
accuracy = float(re.search(r"test accuracy ([0-9.]+) %", open(sys.argv[1]).read()).group(1))
sys.exit(0 if accuracy >= 78.0 else f"cora test accuracy {accuracy} % is below 78 %")
PY
else
  echo "../shared/datasets is absent: examples/embed trains on its generated graph"
  "$scratch/embed/embed"
fi
