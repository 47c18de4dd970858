#!/usr/bin/env bash
# README's first quick-start command: builds halo (Release) and runs the main job on a built-in
# generated graph. Until training lands, the main job is the data path: generate a learnable
# stochastic-block-model dataset, write it as a halo dataset directory, and describe it.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"

out=build/demo
build/bin/halo-convert synth sbm "$out/sbm" --nodes 100000 --avg-degree 20 --features 64 --classes 8 --force
build/bin/halo-convert info "$out/sbm"
