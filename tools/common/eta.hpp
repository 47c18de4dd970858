// The time left in a job of runs of epochs, for the programs' progress lines: "eta 1m05s".
#pragma once

#include <chrono>
#include <string>

namespace halo::tools {

// "42s", "1m05s", "2h03m" (rounded to the second; negative counts as 0).
std::string format_duration(double seconds);

// Estimates what is left of `runs` runs of `epochs` epochs from the epochs reported so far: the
// first epoch's own time, then the mean wall time between reports (evaluation and checkpoints
// included). An upper bound when early stopping ends runs sooner.
class RunEta {
 public:
  using Clock = std::chrono::steady_clock;
  RunEta(int epochs, int runs);
  // After epoch `epoch` (1-based) of run `run` (0-based), which took `epoch_seconds` to train:
  // " | eta 1m05s", or "" when under a second is left.
  std::string after(int run, int epoch, double epoch_seconds, Clock::time_point now = Clock::now());

 private:
  int epochs_;
  int runs_;
  int seen_ = 0;
  Clock::time_point first_;
};

}  // namespace halo::tools
