// Tests of train/run_tracker.*: the best-so-far rule (OGB) and both early-stopping rules, on
// hand-written sequences of epoch records.
#include "train/run_tracker.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "graph/base/error.hpp"

using namespace halo::train;

namespace {

EpochRecord evaluated(int epoch, double valid_acc, double test_acc, double valid_loss) {
  EpochRecord r;
  r.epoch = epoch;
  r.evaluated = true;
  r.valid_acc = valid_acc;
  r.test_acc = test_acc;
  r.valid_loss = valid_loss;
  return r;
}

}  // namespace

TEST_CASE("RunTracker keeps the first epoch with the best validation accuracy and its test accuracy", "[train]") {
  RunTracker t(EarlyStoppingConfig{});
  CHECK(t.best_epoch() == 0);
  CHECK(std::isnan(t.last_test_acc()));
  t.observe(evaluated(1, 0.50, 0.40, 1.0));
  t.observe(evaluated(2, 0.70, 0.65, 0.9));
  t.observe(evaluated(3, 0.70, 0.90, 0.8));  // a tie does not replace epoch 2
  t.observe(evaluated(4, 0.60, 0.95, 0.7));
  CHECK(t.best_epoch() == 2);
  CHECK(t.best_valid_acc() == 0.70);
  CHECK(t.test_acc_at_best() == 0.65);
  CHECK(t.last_test_acc() == 0.95);
  CHECK_FALSE(t.should_stop());  // patience 0: never
}

TEST_CASE("RunTracker stops when the validation loss exceeds the mean of the previous window (tkipf/gcn)", "[train]") {
  // patience 2: the rule looks from the 4th loss on at loss[n-1] > mean(loss[n-3], loss[n-2]).
  //   losses 1.0 0.9 0.8 | 0.84 (mean of 0.9, 0.8 = 0.85: not above) | 0.9 (mean of 0.8, 0.84 = 0.82: stop)
  RunTracker t(EarlyStoppingConfig{2, StoppingMetric::valid_loss});
  CHECK_FALSE(t.observe(evaluated(1, 0.1, 0.1, 1.0)));
  CHECK_FALSE(t.observe(evaluated(2, 0.1, 0.1, 0.9)));
  CHECK_FALSE(t.observe(evaluated(3, 0.1, 0.1, 0.8)));
  CHECK_FALSE(t.observe(evaluated(4, 0.1, 0.1, 0.84)));
  CHECK(t.observe(evaluated(5, 0.1, 0.1, 0.9)));
  CHECK(t.should_stop());
}

TEST_CASE("RunTracker does not apply the loss window before it holds patience + 2 losses", "[train]") {
  // tkipf/gcn: `epoch > early_stopping` with a 0-based epoch; a rising loss at the 3rd value is ignored.
  RunTracker t(EarlyStoppingConfig{2, StoppingMetric::valid_loss});
  CHECK_FALSE(t.observe(evaluated(1, 0.1, 0.1, 1.0)));
  CHECK_FALSE(t.observe(evaluated(2, 0.1, 0.1, 2.0)));
  CHECK_FALSE(t.observe(evaluated(3, 0.1, 0.1, 3.0)));
  CHECK(t.observe(evaluated(4, 0.1, 0.1, 4.0)));
}

TEST_CASE("RunTracker stops after patience evaluations without a better validation accuracy", "[train]") {
  RunTracker t(EarlyStoppingConfig{2, StoppingMetric::valid_acc});
  CHECK_FALSE(t.observe(evaluated(1, 0.5, 0.5, 1.0)));
  CHECK_FALSE(t.observe(evaluated(2, 0.6, 0.5, 1.0)));
  CHECK_FALSE(t.observe(evaluated(3, 0.6, 0.5, 1.0)));  // 1 without improvement
  CHECK(t.observe(evaluated(4, 0.55, 0.5, 1.0)));       // 2: stop
  CHECK(t.best_epoch() == 2);
}

TEST_CASE("RunTracker ignores epochs without evaluation", "[train]") {
  RunTracker t(EarlyStoppingConfig{1, StoppingMetric::valid_acc});
  EpochRecord skipped;
  skipped.epoch = 2;
  skipped.valid_acc = skipped.test_acc = skipped.valid_loss = std::numeric_limits<double>::quiet_NaN();
  t.observe(evaluated(1, 0.5, 0.4, 1.0));
  CHECK_FALSE(t.observe(skipped));
  CHECK(t.best_epoch() == 1);
  CHECK(t.last_test_acc() == 0.4);
}

TEST_CASE("stopping_metric_from_string reads both metric names and refuses others", "[train]") {
  CHECK(stopping_metric_from_string("valid_loss") == StoppingMetric::valid_loss);
  CHECK(stopping_metric_from_string("valid_acc") == StoppingMetric::valid_acc);
  CHECK(std::string(to_string(StoppingMetric::valid_acc)) == "valid_acc");
  CHECK_THROWS_AS(stopping_metric_from_string("loss"), halo::InvalidArgument);
  CHECK_THROWS_AS(RunTracker(EarlyStoppingConfig{-1, StoppingMetric::valid_acc}), halo::InvalidArgument);
}
