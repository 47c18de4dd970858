// Tests of train/trainer.*: training on a generated SBM graph learns (the loss falls, accuracy is
// far above chance), does not depend on the thread count, follows OGB's reporting rule and the
// seed schedule of runs, evaluates when asked, stops early by the rule, and refuses bad input.
#include "train/trainer.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "graph/base/error.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/metrics.hpp"

using namespace halo::train;
namespace datasets = halo::datasets;
namespace kernels = halo::kernels;
using halo::Array;
using halo::InvalidArgument;
using halo::UnsupportedError;
using halo::test::short_training;
using halo::test::small_gcn;
using halo::test::small_sbm;

namespace {

std::vector<double> losses(const RunResult& r) {
  std::vector<double> out;
  for (const EpochRecord& e : r.epochs) out.push_back(e.loss);
  return out;
}

}  // namespace

TEST_CASE("train lowers the loss and reaches accuracy far above chance on an SBM graph", "[train]") {
  const datasets::Dataset ds = small_sbm();
  ModelConfig model = small_gcn();
  SECTION("gcn") {}
  SECTION("sage") { model.kind = "sage"; }
  SECTION("gcn with batch norm, three layers") {
    model.layers = 3;
    model.batch_norm = true;
    model.input_dropout = 0.0f;
  }
  const TrainSummary s = train(ds, model, short_training(60));
  REQUIRE(s.runs.size() == 1);
  const RunResult& r = s.runs[0];
  REQUIRE(r.epochs.size() == 60);
  INFO(model.kind << " first loss " << r.epochs.front().loss << ", last " << r.epochs.back().loss << ", test "
                  << r.test_acc);
  // Three balanced classes: chance is 1/3 and the initial loss about ln 3.
  CHECK(r.epochs.back().loss < 0.6 * r.epochs.front().loss);
  CHECK(r.test_acc > 0.8);
  CHECK(r.epochs.back().train_acc > 0.8);
  CHECK(s.test_acc_mean == r.test_acc);
  CHECK(s.epoch_time_median_s > 0);
  CHECK(s.tensor_peak_bytes > 0);
  CHECK(s.time_split.spmm_s > 0);
  CHECK(s.time_split.gemm_s > 0);
}

TEST_CASE("train gives the same losses with one and with two threads", "[train]") {
  const datasets::Dataset ds = small_sbm();
  ModelConfig model = small_gcn();
  SECTION("gcn") {}
  SECTION("sage with batch norm") {
    model.kind = "sage";
    model.batch_norm = true;
  }
  TrainConfig one = short_training(25);
  one.threads = 1;
  TrainConfig two = one;
  two.threads = 2;
  const std::vector<double> a = losses(train(ds, model, one).runs[0]);
  const std::vector<double> b = losses(train(ds, model, two).runs[0]);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("epoch " << i + 1);
    CHECK(b[i] == Approx(a[i]).epsilon(1e-6));
  }
}

TEST_CASE("train reports the test accuracy at the best validation accuracy and mean ± std over runs", "[train]") {
  const datasets::Dataset ds = small_sbm();
  TrainConfig config = short_training(30);
  config.runs = 3;
  const TrainSummary s = train(ds, small_gcn(), config);
  REQUIRE(s.runs.size() == 3);
  std::vector<double> tests;
  double valid_sum = 0;
  for (const RunResult& r : s.runs) {
    // Naive scan: the first epoch with the highest validation accuracy.
    const EpochRecord* best = nullptr;
    for (const EpochRecord& e : r.epochs) {
      if (best == nullptr || e.valid_acc > best->valid_acc) best = &e;
    }
    REQUIRE(best != nullptr);
    CHECK(r.best_epoch == best->epoch);
    CHECK(r.test_acc == best->test_acc);
    CHECK(r.valid_acc == best->valid_acc);
    CHECK(r.final_test_acc == r.epochs.back().test_acc);
    CHECK(r.seed == config.seed + static_cast<std::uint64_t>(r.run));
    tests.push_back(r.test_acc);
    valid_sum += r.valid_acc;
  }
  const double m = (tests[0] + tests[1] + tests[2]) / 3;
  const double var = ((tests[0] - m) * (tests[0] - m) + (tests[1] - m) * (tests[1] - m) + (tests[2] - m) * (tests[2] - m)) / 2;
  CHECK(s.test_acc_mean == Approx(m));
  CHECK(s.test_acc_std == Approx(std::sqrt(var)).margin(1e-12));
  CHECK(s.valid_acc_mean == Approx(valid_sum / 3));
  // Different seeds give different weights and masks.
  CHECK(s.runs[0].epochs[0].loss != s.runs[1].epochs[0].loss);
}

TEST_CASE("train's run r is the single run seeded with seed + r", "[train]") {
  const datasets::Dataset ds = small_sbm();
  TrainConfig two_runs = short_training(10);
  two_runs.runs = 2;
  TrainConfig second = short_training(10);
  second.seed = two_runs.seed + 1;
  CHECK(losses(train(ds, small_gcn(), two_runs).runs[1]) == losses(train(ds, small_gcn(), second).runs[0]));
}

TEST_CASE("train evaluates every eval_every epochs and at the last one", "[train]") {
  const datasets::Dataset ds = small_sbm();
  TrainConfig config = short_training(11);
  config.eval_every = 4;
  std::vector<int> seen;
  const TrainSummary s = train(ds, small_gcn(), config, [&](int run, const EpochRecord& r) {
    CHECK(run == 0);
    seen.push_back(r.epoch);
  });
  CHECK(seen == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  for (const EpochRecord& r : s.runs[0].epochs) {
    const bool expected = r.epoch == 4 || r.epoch == 8 || r.epoch == 11;
    CHECK(r.evaluated == expected);
    CHECK(std::isnan(r.valid_acc) == !expected);
  }
  CHECK((s.runs[0].best_epoch == 4 || s.runs[0].best_epoch == 8 || s.runs[0].best_epoch == 11));
}

TEST_CASE("train stops at the first epoch whose validation loss exceeds the window mean", "[train]") {
  const datasets::Dataset ds = small_sbm();
  TrainConfig config = short_training(400);
  config.optimizer.lr = 0.05f;
  config.early_stopping = EarlyStoppingConfig{5, StoppingMetric::valid_loss};
  const RunResult r = train(ds, small_gcn(), config).runs[0];
  REQUIRE(r.stopped_early);
  REQUIRE(r.epochs.size() < 400);
  // Naive check of the rule at every epoch: only the last one satisfies it.
  for (std::size_t n = 7; n <= r.epochs.size(); ++n) {
    double window = 0;
    for (std::size_t i = n - 6; i < n - 1; ++i) window += r.epochs[i].valid_loss;
    const bool rule = r.epochs[n - 1].valid_loss > window / 5;
    INFO("epoch " << n);
    CHECK(rule == (n == r.epochs.size()));
  }
}

TEST_CASE("train refuses datasets it cannot train on and bad settings", "[train]") {
  const ModelConfig model = small_gcn();
  SECTION("no features") {
    datasets::Dataset ds = small_sbm();
    ds.target().features = Array<float>();
    CHECK_THROWS_WITH(train(ds, model, short_training(1)), Catch::Contains("no node features"));
  }
  SECTION("an empty split") {
    datasets::Dataset ds = small_sbm();
    ds.split.valid = Array<std::int64_t>::vector(0);
    CHECK_THROWS_WITH(train(ds, model, short_training(1)), Catch::Contains("valid 0"));
  }
  SECTION("zero epochs") {
    CHECK_THROWS_AS(train(small_sbm(), model, short_training(0)), InvalidArgument);
  }
  SECTION("resume without a checkpoint directory") {
    TrainConfig c = short_training(1);
    c.resume = true;
    CHECK_THROWS_WITH(train(small_sbm(), model, c), Catch::Contains("checkpoint directory"));
  }
  SECTION("an unknown model kind") {
    ModelConfig bad = model;
    bad.kind = "gat";
    CHECK_THROWS_AS(train(small_sbm(), bad, short_training(1)), InvalidArgument);
  }
  SECTION("a GPU") {
    TrainConfig c = short_training(1);
    c.device = kernels::Device::cuda(0);
    CHECK_THROWS_AS(train(small_sbm(), model, c), UnsupportedError);
  }
}

TEST_CASE("training_fingerprint follows the settings that change the losses and ignores the others", "[train]") {
  const datasets::Dataset ds = small_sbm();
  const TrainConfig base = short_training(10);
  const std::string f = training_fingerprint(ds, small_gcn(), base);
  TrainConfig other = base;
  other.runs = 4;
  other.threads = 1;
  other.checkpoint_every = 3;
  other.memory_limit = 1 << 30;
  CHECK(training_fingerprint(ds, small_gcn(), other) == f);
  other.optimizer.lr = 0.02f;
  CHECK(training_fingerprint(ds, small_gcn(), other) != f);
  ModelConfig wider = small_gcn();
  wider.hidden = 32;
  CHECK(training_fingerprint(ds, wider, base) != f);
}
