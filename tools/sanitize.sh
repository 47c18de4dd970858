#!/usr/bin/env bash
# The data layer and the CPU kernels under AddressSanitizer and UBSan: builds only the test
# binaries of graph/, datasets/, partition/ and kernels/ with the asan preset (build-asan/, no
# CUDA) and runs their unit tests, so a memory error in a reader, a partitioner or a kernel that
# the Release tests pass over is caught. Sized for CI on 2 cores (tools/test.sh runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
modules=(graph datasets partition kernels)
cmake --preset asan >/dev/null
targets=()
for m in "${modules[@]}"; do targets+=("halo_${m}_tests"); done
cmake --build build-asan -j "$jobs" --target "${targets[@]}" 2>&1 | tail -1
regex="^($(IFS='|'; echo "${modules[*]}"))/"
# 600 s a test: the emulated CUDA kernels' tests (a fiber per lane) take 1.5-2.5 min under ASan
# on 2 busy cores; a hang still ends there.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 OMP_NUM_THREADS=2 \
  ctest --test-dir build-asan -L unit -R "$regex" -j "$jobs" --timeout 600 --output-on-failure
