#!/usr/bin/env bash
# Builds halo (Release, all cores) and runs every test through CTest; then the data layer's and
# the CPU kernels' tests under AddressSanitizer and UBSan (tools/sanitize.sh) and every parser's
# fuzz target for 20 s (tools/fuzz.sh). Installs the Debian dependencies first when any is
# missing. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
jobs=$(nproc)
cmake --preset release
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"
tools/sanitize.sh
tools/fuzz.sh --seconds 20
