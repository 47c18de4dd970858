// BestPredictions: what a run predicts for every vertex of the labelled type at its best
// evaluation (OGB's rule picks that epoch's test accuracy), written as OGB's evaluators take it:
// y_pred.npy, the class of each vertex (int64, n x 1, the first largest logit) or, for a
// multi-label task, its n x tasks scores (the logits, float32). Each rank keeps its own rows;
// writing gathers them into the dataset's vertex order on rank 0.
//
// Memory: one value per row (multi-label: one per task) on the host of every rank while the run
// trains, and the whole file's values on every rank's host while they are gathered (all-reduced
// in pieces of 64 MB, which is all that a GPU holds of them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/tensor.hpp"
#include "train/dist/communicator.hpp"

namespace halo::train::detail {

class BestPredictions {
 public:
  // tasks: 0 for one class per vertex, else the binary tasks of a multi-label task.
  explicit BestPredictions(std::int64_t tasks) : tasks_(tasks) {}

  // Keeps the predictions of `logits` (this process's rows, on any device), made at `epoch`, when
  // none is kept yet or `valid_acc` beats the kept one's (ties keep the earlier, as RunTracker).
  void offer(const kernels::Tensor& logits, int epoch, double valid_acc);

  // The epoch of the kept predictions; 0 when none was kept.
  int epoch() const { return epoch_; }

  // Collective: every rank's kept rows, row k at ids[k] (empty ids: at k), in a file of `rows`
  // rows written atomically by rank 0 to `path`. InvalidArgument when an id is outside the file
  // or a class cannot be carried exactly (more than 2^24 classes); IoError when writing fails.
  void write(dist::Communicator& comm, kernels::IndexView ids, std::int64_t rows, const std::string& path) const;

 private:
  std::int64_t tasks_;
  int epoch_ = 0;
  double valid_acc_ = 0.0;
  std::int64_t rows_ = 0;
  std::vector<float> values_;  // rows_ x width: the class as a float (exact below 2^24), or the scores
};

// Where the predictions of `run` go under `dir`: dir/run-NNNN/y_pred.npy.
std::string predictions_path(const std::string& dir, int run);

}  // namespace halo::train::detail
