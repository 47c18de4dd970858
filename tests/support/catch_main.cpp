// The Catch2 main shared by every test binary but the MPI one: its exit status is Catch's (the
// failed assertions), or skip_exit_code when every test case it ran passed and one skipped
// (tests/support/skip.hpp), so that CTest reports a skipped test as skipped.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/support/skip.hpp"

int main(int argc, char* argv[]) {
  const int failed = Catch::Session().run(argc, argv);
  // Catch returns the failed assertions' count: 77 of them must not read as a skip.
  if (failed != 0) return failed == halo::test::skip_exit_code ? failed + 1 : failed;
  return halo::test::skip_recorded() ? halo::test::skip_exit_code : 0;
}
