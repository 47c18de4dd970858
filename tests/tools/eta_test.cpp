// Tests of tools/common/eta.*: durations as people read them, and the time left in a job of runs
// of epochs from the first epoch's time, then from the wall time between epochs.
#include "tools/common/eta.hpp"

#include <catch2/catch.hpp>
#include <chrono>

using halo::tools::format_duration;
using halo::tools::RunEta;

TEST_CASE("format_duration writes seconds, minutes and hours as people read them", "[tools]") {
  CHECK(format_duration(-3) == "0s");
  CHECK(format_duration(42.4) == "42s");
  CHECK(format_duration(59.6) == "1m00s");
  CHECK(format_duration(65) == "1m05s");
  CHECK(format_duration(7380) == "2h03m");
}

TEST_CASE("RunEta counts the epochs left in every run, from the first epoch's time then the mean gap", "[tools]") {
  const RunEta::Clock::time_point t0{};
  const auto at = [&](double s) {
    return t0 + std::chrono::duration_cast<RunEta::Clock::duration>(std::chrono::duration<double>(s));
  };
  RunEta eta(100, 3);  // 300 epochs in all
  // Epoch 1 of run 0 trained in 0.5 s: 299 left at 0.5 s each.
  CHECK(eta.after(0, 1, 0.5, at(10.0)) == " | eta 2m30s");
  // Then 2 s between reports: 298 left at 2 s each.
  CHECK(eta.after(0, 2, 0.5, at(12.0)) == " | eta 9m56s");
  // Run 1, epoch 100 (an early-stopped run 0 jumps ahead): 100 left, mean gap (20 - 10) / 2 = 5 s.
  CHECK(eta.after(1, 100, 0.5, at(20.0)) == " | eta 8m20s");
  // The last epoch leaves nothing; under a second left says nothing either.
  CHECK(eta.after(2, 100, 0.5, at(21.0)).empty());
  RunEta quick(10, 1);
  CHECK(quick.after(0, 1, 0.01, at(0.0)).empty());
}
