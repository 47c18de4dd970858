// Skipping a test case that cannot run here (no GPU, no shared datasets, an older CPU):
// HALO_SKIP(reason) warns "skipped: <reason>", records the skip and returns. The Catch2 main of
// the test binaries (tests/support/catch_main.cpp) then exits with skip_exit_code when nothing
// failed, and CTest reports the test as skipped (SKIP_RETURN_CODE), not as passed.
#pragma once

#include <catch2/catch.hpp>

namespace halo::test {

constexpr int skip_exit_code = 77;

// Whether a test case of this process has skipped (set by HALO_SKIP and mark_skipped).
inline bool& skip_recorded() {
  static bool skipped = false;
  return skipped;
}
inline void mark_skipped() { skip_recorded() = true; }

}  // namespace halo::test

#define HALO_SKIP(reason)               \
  do {                                  \
    ::halo::test::mark_skipped();       \
    WARN("skipped: " << reason);        \
    return;                             \
  } while (0)
