#!/usr/bin/env bash
# README's first quick-start command: builds the two programs it runs (the "demo" preset: Release,
# CPU only, in build-demo/; tools/test.sh builds everything in build/), generates a learnable
# stochastic-block-model dataset (100,000 vertices, 8 classes: chance is 12.5 %), writes it as a
# halo dataset directory, describes it, and trains a 2-layer GCN on the whole graph, printing one
# line per epoch and the test accuracy at the best validation accuracy.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
cmake --preset demo >/dev/null
cmake --build --preset demo -j "$(nproc)"

bin=build-demo/bin
out=build-demo/demo
"$bin/halo-convert" synth sbm "$out/sbm" --nodes 100000 --avg-degree 20 --features 64 --classes 8 --force
"$bin/halo-convert" info "$out/sbm"
"$bin/halo-train" --dataset "$out/sbm" --model gcn --layers 2 --hidden 32 --epochs 30 --eval-every 5 \
  --json "$out/train.json"
