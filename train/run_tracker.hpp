// What one training run records per epoch, and the rules applied to those records: the best
// validation accuracy so far (OGB's rule: report the test accuracy of the epoch with the best
// validation accuracy) and early stopping (Kipf & Welling's validation-loss window, or patience
// on the validation accuracy).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace halo::train {

// One epoch of one run. Accuracies are fractions in [0, 1]; the evaluation fields are NaN for an
// epoch without evaluation (eval_every > 1).
struct EpochRecord {
  int epoch = 0;                // 1-based
  double loss = 0.0;            // mean NLL over the training vertices, training mode (dropout on)
  bool evaluated = false;
  double train_acc = 0.0;       // evaluation mode (dropout off), like valid and test
  double valid_acc = 0.0;
  double test_acc = 0.0;
  double valid_loss = 0.0;      // mean NLL over the validation vertices plus the L2 term (tkipf/gcn)
  double time_s = 0.0;          // forward, backward and optimiser step
  double eval_time_s = 0.0;     // the evaluation pass
  std::int64_t bytes_sent = 0;      // halo rows sent to other ranks by the training step (0 on one process)
  std::int64_t bytes_received = 0;  // halo rows received from them by the training step
  double halo_s = 0.0;              // time of the training step in halo exchanges
  double all_reduce_s = 0.0;        // time of the training step in the gradient and statistics all-reduces
  // Streamed features (issue #7; all 0 when they are resident), this process's training step:
  std::int64_t feature_passes = 0;           // streaming passes over the features
  std::int64_t feature_bytes_to_device = 0;  // feature bytes copied host→device (the cached rows' are not)
  double feature_cache_hit_rate = 0.0;       // rows taken from the cache / rows streamed
  double feature_wait_s = 0.0;               // time blocked waiting for the streaming worker
};

enum class StoppingMetric {
  valid_loss,  // stop once the validation loss exceeds the mean of the previous `patience` (tkipf/gcn)
  valid_acc,   // stop after `patience` evaluations without a better validation accuracy
};
const char* to_string(StoppingMetric metric);
// "valid_loss" or "valid_acc"; throws InvalidArgument naming the text otherwise.
StoppingMetric stopping_metric_from_string(const std::string& name);

struct EarlyStoppingConfig {
  int patience = 0;  // evaluations; 0 = never stop early
  StoppingMetric metric = StoppingMetric::valid_loss;
};

// Follows one run's records in epoch order. Deterministic: replaying the same records gives the
// same state, which is how a resumed run recovers it from its checkpoint. O(1) per record
// (O(patience) for the loss window).
class RunTracker {
 public:
  explicit RunTracker(EarlyStoppingConfig config);

  // Takes the next epoch's record; returns true when the run should stop after it. Epochs
  // without evaluation never stop a run and never become the best.
  bool observe(const EpochRecord& record);

  bool should_stop() const { return stop_; }
  // The evaluated epoch with the highest validation accuracy (the first of ties), 0 before any.
  int best_epoch() const { return best_epoch_; }
  double best_valid_acc() const { return best_valid_acc_; }
  double test_acc_at_best() const { return test_acc_at_best_; }
  // The test accuracy of the last evaluated epoch (what tkipf/gcn reports), NaN before any.
  double last_test_acc() const { return last_test_acc_; }

 private:
  EarlyStoppingConfig config_;
  std::vector<double> valid_losses_;
  int evaluations_since_best_ = 0;
  int best_epoch_ = 0;
  double best_valid_acc_;
  double test_acc_at_best_;
  double last_test_acc_;
  bool stop_ = false;
};

}  // namespace halo::train
