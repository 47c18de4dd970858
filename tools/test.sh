#!/usr/bin/env bash
# Builds halo (Release, all cores) and runs every test through CTest. Installs the Debian
# dependencies first when any is missing. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
jobs=$(nproc)
cmake --preset release
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"
