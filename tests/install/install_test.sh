#!/usr/bin/env bash
# Installs the built halo into a scratch prefix, then configures, builds and runs a tiny outside
# project that finds it with find_package(halo), links halo::halo and trains through train().
# Usage: install_test.sh BUILD_DIR CONSUMER_SOURCE_DIR
set -euo pipefail
build_dir=$1
consumer_src=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
test -f "$scratch/prefix/lib/cmake/halo/haloConfig.cmake"
test -f "$scratch/prefix/include/halo/graph/csr.hpp"
test -f "$scratch/prefix/include/halo/train/trainer.hpp"
test -f "$scratch/prefix/include/halo/train/layers/gcn_conv.hpp"
cmake -S "$consumer_src" -B "$scratch/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/build" >/dev/null
"$scratch/build/halo_consumer"
