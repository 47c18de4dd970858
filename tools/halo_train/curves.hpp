// halo-train --tensorboard DIR: each run's per-epoch scalars as TensorBoard curves, one folder per
// run (DIR/run-0, DIR/run-1, ...), written by rank 0 only and flushed after every epoch.
#pragma once

#include <memory>
#include <string>

#include "tools/common/tensorboard_events.hpp"
#include "train/run_tracker.hpp"

namespace halo::tools {

class TrainingCurves {
 public:
  // Creates `dir` at once, so an unwritable folder is refused before training.
  explicit TrainingCurves(std::string dir);
  // loss/train, time/epoch_s, time/halo_s, time/all_reduce_s and traffic/bytes_sent every epoch;
  // accuracy/train, accuracy/valid, accuracy/test and loss/valid on evaluated epochs.
  void add(int run, const train::EpochRecord& record);

 private:
  std::string dir_;
  int run_ = -1;
  std::unique_ptr<TensorboardWriter> writer_;
};

}  // namespace halo::tools
