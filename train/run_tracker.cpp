// Best-so-far and early-stopping rules over a run's epoch records.
#include "train/run_tracker.hpp"

#include <limits>

#include "graph/base/error.hpp"

namespace halo::train {

const char* to_string(StoppingMetric metric) {
  return metric == StoppingMetric::valid_loss ? "valid_loss" : "valid_acc";
}

StoppingMetric stopping_metric_from_string(const std::string& name) {
  if (name == "valid_loss") return StoppingMetric::valid_loss;
  if (name == "valid_acc") return StoppingMetric::valid_acc;
  throw InvalidArgument("early-stopping metric must be valid_loss or valid_acc, got '" + name + "'");
}

RunTracker::RunTracker(EarlyStoppingConfig config)
    : config_(config),
      best_valid_acc_(std::numeric_limits<double>::quiet_NaN()),
      test_acc_at_best_(std::numeric_limits<double>::quiet_NaN()),
      last_test_acc_(std::numeric_limits<double>::quiet_NaN()) {
  HALO_EXPECTS(config.patience >= 0, "patience must be >= 0, got " + std::to_string(config.patience));
}

bool RunTracker::observe(const EpochRecord& record) {
  if (!record.evaluated) return stop_;
  last_test_acc_ = record.test_acc;
  // Strictly better, so ties keep the earlier epoch (OGB's Logger does the same).
  if (best_epoch_ == 0 || record.valid_acc > best_valid_acc_) {
    best_epoch_ = record.epoch;
    best_valid_acc_ = record.valid_acc;
    test_acc_at_best_ = record.test_acc;
    evaluations_since_best_ = 0;
  } else {
    ++evaluations_since_best_;
  }
  valid_losses_.push_back(record.valid_loss);
  const int p = config_.patience;
  if (p == 0) return stop_;
  if (config_.metric == StoppingMetric::valid_acc) {
    stop_ = evaluations_since_best_ >= p;
  } else {
    // tkipf/gcn train.py: `epoch > early_stopping and cost_val[-1] > mean(cost_val[-(early_stopping+1):-1])`
    // with a 0-based epoch, i.e. at least p + 2 losses recorded.
    const std::size_t n = valid_losses_.size();
    if (n >= static_cast<std::size_t>(p) + 2) {
      double window = 0.0;
      for (std::size_t i = n - 1 - p; i < n - 1; ++i) window += valid_losses_[i];
      stop_ = valid_losses_.back() > window / p;
    }
  }
  return stop_;
}

}  // namespace halo::train
