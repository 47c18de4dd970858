// Tests of train() (train/trainer.*) for GCN and GraphSAGE (train/detail/homogeneous_trainer.*):
// training on a generated SBM graph learns (the loss falls, accuracy is far above chance), does not depend on the thread count, follows OGB's reporting rule and the
// seed schedule of runs, evaluates when asked, stops early by the rule, and refuses bad input;
// with the features streamed (a forced budget, uneven chunks, a memory limit, a precomputed Â·X)
// it gives the in-memory losses and reports what crossed.
#include "train/trainer.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "tests/support/memory_plan_items.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/detail/homogeneous_trainer.hpp"
#include "train/metrics.hpp"
#include "train/models/model_shape.hpp"
#include "train/training_problem.hpp"

using namespace halo::train;
namespace datasets = halo::datasets;
namespace kernels = halo::kernels;
using halo::Array;
using halo::InvalidArgument;
using halo::UnsupportedError;
using halo::test::has_item;
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
  SECTION("gat, 4 heads of 4") {
    model.kind = "gat";
    model.heads = 4;
    model.hidden = 4;
    model.attention_dropout = 0.3f;
  }
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
  SECTION("gat with attention dropout") {
    model.kind = "gat";
    model.heads = 3;
    model.hidden = 4;
    model.attention_dropout = 0.5f;
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

TEST_CASE("train stops a run whose training loss is no longer finite, naming the epoch, unless told to go on",
          "[train]") {
  const halo::datasets::Dataset ds = small_sbm();
  TrainConfig config = short_training(6);
  config.optimizer.lr = 1e30f;
  CHECK_THROWS_WITH(train(ds, small_gcn(), config),
                    Catch::Contains("run 0 diverged: the training loss of epoch") &&
                        Catch::Contains("no checkpoint of it was written") && Catch::Contains("--allow-nonfinite"));
  config.allow_nonfinite = true;
  const TrainSummary s = train(ds, small_gcn(), config);
  REQUIRE(s.runs.at(0).epochs.size() == 6);
  CHECK_FALSE(std::isfinite(s.runs[0].epochs.back().loss));
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
    bad.kind = "gin";
    CHECK_THROWS_AS(train(small_sbm(), bad, short_training(1)), InvalidArgument);
  }
  SECTION("a GPU this machine does not have") {
    TrainConfig c = short_training(1);
    c.device = kernels::Device::cuda(64);
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

namespace {

// A whole-dataset problem with its operators built for `kind`, for train_homogeneous_problem: its
// plan has no process bytes, so a limit taken from one plan holds for the next run's.
struct PlannedProblem {
  GraphOperators operators;
  halo::train::dist::LocalCommunicator local;
  TrainingProblem problem;

  PlannedProblem(const datasets::Dataset& ds, const std::string& kind)
      : operators(build_graph_operators(ds.graph, kind)), problem(halo::test::whole_dataset_problem(ds, local)) {
    problem.operators = &operators;
  }
};

// Epoch losses of two runs agree to `relative` (float rounding of the streamed GEMMs only).
void check_same_losses(const RunResult& got, const RunResult& want, double relative = 1e-5) {
  REQUIRE(got.epochs.size() == want.epochs.size());
  for (std::size_t i = 0; i < got.epochs.size(); ++i) {
    INFO("epoch " << i + 1);
    CHECK(got.epochs[i].loss == Approx(want.epochs[i].loss).epsilon(relative));
  }
}

}  // namespace

TEST_CASE("train with a feature budget of 1/8 of the features gives the in-memory losses", "[train]") {
  // 600 vertices x 40 features: 96000 bytes; 1/8 is 12000, staging 2 x 9 rows (600 = 66 x 9 + 6).
  const datasets::Dataset ds = halo::test::wide_sbm(40);
  ModelConfig model = small_gcn();
  SECTION("gcn") {}
  SECTION("sage") { model.kind = "sage"; }
  SECTION("sage, three layers with batch norm") {
    model.kind = "sage";
    model.layers = 3;
    model.batch_norm = true;
  }
  TrainConfig config = short_training(8);
  config.eval_every = 3;
  const TrainSummary memory = train(ds, model, config);
  config.feature_memory_budget = 12000;
  const TrainSummary streamed = train(ds, model, config);
  check_same_losses(streamed.runs[0], memory.runs[0]);
  CHECK(streamed.runs[0].best_epoch == memory.runs[0].best_epoch);

  const FeatureStreamingSummary& f = streamed.feature_streaming;
  CHECK_FALSE(memory.feature_streaming.streamed);
  CHECK(memory.runs[0].epochs[0].feature_passes == 0);
  REQUIRE(f.streamed);
  CHECK(f.budget_bytes == 12000);
  CHECK(f.chunk_rows == 9);
  CHECK(f.cache_rows == (12000 - 2 * 9 * 160) / 160);
  CHECK(f.staging_bytes + f.cache_bytes <= 12000);
  // A training step streams X once forward (twice for GraphSAGE's two products) and once back;
  // each pass copies the uncached rows and takes the cached ones from the cache.
  const std::int64_t passes = model.kind == "gcn" ? 2 : 3;
  for (const EpochRecord& e : streamed.runs[0].epochs) {
    CHECK(e.feature_passes == passes);
    CHECK(e.feature_bytes_to_device == passes * (600 - f.cache_rows) * 160);
    CHECK(e.feature_cache_hit_rate == Approx(f.cached_fraction));
    CHECK(e.feature_wait_s >= 0.0);
  }
  CHECK(f.passes == 8 * passes);
  CHECK(f.bytes_to_device == 8 * passes * (600 - f.cache_rows) * 160);
  bool listed = false;
  for (const MemoryItem& i : streamed.memory_plan.items)
    listed = listed || i.name == "features: staging and cache (streamed)";
  CHECK(listed);
  // The placement changes float rounding only, so a checkpoint resumes across it.
  TrainConfig in_memory = config;
  in_memory.feature_memory_budget = 0;
  CHECK(training_fingerprint(ds, model, config) == training_fingerprint(ds, model, in_memory));
}

TEST_CASE("train on features stored in 16 bits gives the losses of their float32 widening, resident and streamed",
          "[train]") {
  const halo::HalfFormat format = GENERATE(halo::HalfFormat::float16, halo::HalfFormat::bfloat16);
  const std::string kind = GENERATE("gcn", "sage");
  const std::int64_t budget = GENERATE(0, 12000);
  INFO(kind << ", budget " << budget);
  halo::datasets::Dataset half = halo::test::wide_sbm(40);
  halo::datasets::Dataset wide = halo::test::wide_sbm(40);
  halo::datasets::NodeType& t = half.node_types[0];
  t.half_features = halo::datasets::narrow_features(t.features, format);
  t.features = Array<float>();
  wide.node_types[0].features = halo::datasets::widen_features(t.half_features);
  ModelConfig model = small_gcn();
  model.kind = kind;
  TrainConfig config = short_training(6);
  config.feature_memory_budget = budget;
  const TrainSummary a = train(half, model, config);
  const TrainSummary b = train(wide, model, config);
  // The model sees the very same float32 values: the losses agree to the bit.
  REQUIRE(a.runs[0].epochs.size() == b.runs[0].epochs.size());
  for (std::size_t i = 0; i < a.runs[0].epochs.size(); ++i) CHECK(a.runs[0].epochs[i].loss == b.runs[0].epochs[i].loss);
  CHECK(a.feature_streaming.feature_dtype == (format == halo::HalfFormat::float16 ? "f16" : "bf16"));
  CHECK(b.feature_streaming.feature_dtype == "f32");
  CHECK(a.feature_streaming.streamed == (budget > 0));
  CHECK(a.feature_streaming.bytes_to_device == b.feature_streaming.bytes_to_device);
  CHECK(2 * a.feature_streaming.bytes_from_source == b.feature_streaming.bytes_from_source);
  CHECK(b.feature_streaming.bytes_from_source == b.feature_streaming.bytes_to_device);
  if (budget > 0) CHECK(a.feature_streaming.bytes_from_source > 0);
}

TEST_CASE("train streams chunks that split the rows unevenly, down to one row, to the in-memory losses", "[train]") {
  const datasets::Dataset ds = halo::test::wide_sbm(40);
  const std::string kind = GENERATE("gcn", "sage");
  // 320 bytes: two one-row buffers and no cache; 8960: chunks of 7 rows (600 = 85 x 7 + 5).
  const std::int64_t budget = GENERATE(320, 8960);
  CAPTURE(kind, budget);
  ModelConfig model = small_gcn();
  model.kind = kind;
  TrainConfig config = short_training(3);
  config.eval_every = 10;
  const TrainSummary memory = train(ds, model, config);
  config.feature_memory_budget = budget;
  const TrainSummary streamed = train(ds, model, config);
  CHECK(streamed.feature_streaming.chunk_rows == (budget == 320 ? 1 : 7));
  check_same_losses(streamed.runs[0], memory.runs[0]);
}

TEST_CASE("train refuses a feature budget too small for two staging buffers, naming the minimum", "[train]") {
  TrainConfig config = short_training(2);
  config.feature_memory_budget = 319;
  bool trained = false;
  const auto on_epoch = [&](int, const EpochRecord&) { trained = true; };
  CHECK_THROWS_WITH(train(halo::test::wide_sbm(40), small_gcn(), config, on_epoch),
                    Catch::Contains("feature_memory_budget of 319 bytes") &&
                        Catch::Contains("the minimum is 320 bytes"));
  CHECK_FALSE(trained);
}

TEST_CASE("train streams a first layer that aggregates first by transforming first, or with Â·X precomputed, to the "
          "same losses",
          "[train]") {
  // 12 features <= 16 hidden: both GCN and GraphSAGE aggregate first in layer 1.
  const datasets::Dataset ds = small_sbm();
  ModelConfig model = small_gcn();
  model.kind = GENERATE("gcn", "sage");
  CAPTURE(model.kind);
  model.input_dropout = 0.0f;
  TrainConfig config = short_training(6);
  const TrainSummary memory = train(ds, model, config);
  TrainConfig streamed = config;
  streamed.feature_memory_budget = 4 * 600 * 12 / 2;
  // Streamed, layer 1 transforms first (Â·(X·W)): the same function, rounded in another order.
  const TrainSummary transformed = train(ds, model, streamed);
  CHECK(transformed.feature_streaming.streamed);
  CHECK_FALSE(transformed.feature_streaming.precomputed_aggregation);
  check_same_losses(transformed.runs[0], memory.runs[0]);
  streamed.precompute_first_aggregation = true;
  TrainConfig precomputed = config;
  precomputed.precompute_first_aggregation = true;
  for (const TrainConfig* c : {&streamed, &precomputed}) {
    const TrainSummary s = train(ds, model, *c);
    CHECK(s.feature_streaming.precomputed_aggregation);
    CHECK(s.feature_streaming.streamed == (c == &streamed));
    check_same_losses(s.runs[0], memory.runs[0]);
  }
  // Â·X is constant only without input dropout.
  model.input_dropout = 0.5f;
  CHECK_THROWS_WITH(train(ds, model, precomputed), Catch::Contains("input dropout 0"));
}

TEST_CASE("train streams the features when the resident plan exceeds the memory limit and the rest fits", "[train]") {
  // 600 x 400 features: 960000 bytes. The first layer transforms first, so the input dropout
  // acts as it reads them, through a scratch chunk (here all 600 rows), held only while a product
  // runs: what the resident input adds to the plan's peak is input_bytes.
  const datasets::Dataset ds = halo::test::wide_sbm(400);
  const ModelConfig model = small_gcn();
  const std::int64_t input_bytes = ModelShape(model, 400, ds.meta.num_classes).input_activation_bytes(600);
  CHECK(input_bytes > 0);
  CHECK(input_bytes < 960000);
  PlannedProblem planned(ds, model.kind);
  TrainingProblem& problem = planned.problem;
  TrainConfig config = short_training(3);
  const TrainSummary memory = detail::train_homogeneous_problem(problem, model, config);
  REQUIRE_FALSE(memory.feature_streaming.streamed);
  // Half the features' bytes below the resident plan: streaming frees the tensor and the copy.
  config.memory_limit = memory.memory_plan.total_bytes() - 480000;
  const TrainSummary limited = detail::train_homogeneous_problem(problem, model, config);
  REQUIRE(limited.feature_streaming.streamed);
  CHECK(limited.memory_plan.total_bytes() <= config.memory_limit);
  // The spare beside the streamed plan: the features' 960000 bytes and input_bytes, less the
  // 480000 bytes cut, in whole MiB when above 2 MiB (it is not).
  CHECK(limited.feature_streaming.budget_bytes == 960000 + input_bytes - 480000);
  check_same_losses(limited.runs[0], memory.runs[0]);
  config.memory_limit = memory.memory_plan.total_bytes() - 2 * 960000;
  CHECK_THROWS_WITH(detail::train_homogeneous_problem(problem, model, config), Catch::Contains("memory limit"));
}

TEST_CASE("train recomputes Â·x in backward when only that fits the memory limit and keeps the losses bitwise",
          "[train]") {
  // 8 features into 64 hidden: the first layer aggregates first and keeps Â·x (600 x 8 floats).
  // (With an input dropout it would let the dropped copy go instead, as many bytes: no saving.)
  const datasets::Dataset ds = halo::test::wide_sbm(8);
  ModelConfig model = small_gcn();
  model.hidden = 64;
  model.input_dropout = 0.0f;
  PlannedProblem planned(ds, model.kind);
  TrainingProblem& problem = planned.problem;
  TrainConfig config = short_training(3);
  const TrainSummary kept = detail::train_homogeneous_problem(problem, model, config);
  CHECK(kept.recompute == "none");
  REQUIRE_FALSE(kept.feature_streaming.streamed);
  config.memory_limit = kept.memory_plan.total_bytes() - 1;
  const TrainSummary recomputed = detail::train_homogeneous_problem(problem, model, config);
  CHECK(recomputed.recompute == "aggregation");
  CHECK_FALSE(recomputed.feature_streaming.streamed);
  CHECK(recomputed.memory_plan.total_bytes() <= config.memory_limit);
  check_same_losses(recomputed.runs[0], kept.runs[0], 0.0);
  // Asked for, whatever the limit; refused where nothing aggregates first.
  model.recompute = "aggregation";
  CHECK(train(ds, model, short_training(2)).recompute == "aggregation");
  model.recompute = "none";
  const TrainSummary streamed = detail::train_homogeneous_problem(problem, model, config);
  CHECK(streamed.recompute == "none");
  CHECK(streamed.feature_streaming.streamed);
  model.recompute = "layer";  // for GCN, Â·x as "aggregation"
  CHECK(train(ds, model, short_training(2)).recompute == "layer");
  model.recompute = "everything";
  CHECK_THROWS_WITH(train(ds, model, short_training(2)),
                    Catch::Contains("recompute must be auto, none, aggregation or layer, got 'everything'"));
  // With an input dropout, recomputing would save nothing: "auto" keeps Â·x, short of memory or not.
  model.recompute = "auto";
  model.input_dropout = 0.5f;
  config.memory_limit = 0;
  const TrainSummary dropped = detail::train_homogeneous_problem(problem, model, config);
  config.memory_limit = dropped.memory_plan.total_bytes() - 1;
  CHECK(detail::train_homogeneous_problem(problem, model, config).recompute == "none");
}

TEST_CASE("train keeps bf16 activations at a smaller plan and peak with the float32 losses within rounding",
          "[train]") {
  const datasets::Dataset ds = halo::test::wide_sbm(8);
  ModelConfig model = small_gcn();
  model.hidden = 64;
  model.layers = 3;
  const TrainSummary whole = train(ds, model, short_training(3));
  model.activation_dtype = "bf16";
  const TrainSummary halved = train(ds, model, short_training(3));
  const auto activations = [](const MemoryPlan& plan) {
    for (const MemoryItem& item : plan.items)
      if (item.name == "activations") return item.bytes;
    return std::int64_t{-1};
  };
  CHECK(activations(halved.memory_plan) > 0);
  CHECK(activations(halved.memory_plan) < activations(whole.memory_plan));
  CHECK(halved.tensor_peak_bytes < whole.tensor_peak_bytes);
  check_same_losses(halved.runs[0], whole.runs[0], 1e-2);
  // GAT keeps its hidden outputs in bfloat16 too (ELU's backward reads the rounded output).
  model.kind = "gat";
  model.heads = 2;
  model.hidden = 16;
  model.activation_dtype = "f32";
  const TrainSummary gat_whole = train(ds, model, short_training(3));
  model.activation_dtype = "bf16";
  const TrainSummary gat_halved = train(ds, model, short_training(3));
  CHECK(activations(gat_halved.memory_plan) < activations(gat_whole.memory_plan));
  CHECK(gat_halved.tensor_peak_bytes < gat_whole.tensor_peak_bytes);
  check_same_losses(gat_halved.runs[0], gat_whole.runs[0], 1e-2);
  model.kind = "rgcn";
  CHECK_THROWS_WITH(train(ds, model, short_training(2)),
                    Catch::Contains("activation dtype bf16 is for gcn, sage and gat"));
}

TEST_CASE("train builds the graph operators only once the memory plan has passed", "[train]") {
  const datasets::Dataset ds = small_sbm();
  const ModelConfig model = small_gcn();
  halo::train::dist::LocalCommunicator local;
  std::optional<GraphOperators> operators;
  int builds = 0;
  TrainingProblem problem = halo::test::whole_dataset_problem(ds, local);
  problem.build_operators = [&](TrainingProblem& p) {
    ++builds;
    operators.emplace(build_graph_operators(ds.graph, model.kind));
    p.operators = &*operators;
  };
  TrainConfig config = short_training(2);
  const TrainSummary fits = detail::train_homogeneous_problem(problem, model, config);
  CHECK(builds == 1);
  // Far under the plan (no streaming fits either): refused before anything is built.
  config.memory_limit = 4096;
  CHECK_THROWS_WITH(detail::train_homogeneous_problem(problem, model, config), Catch::Contains("memory limit"));
  CHECK(builds == 1);
  // An allocation that fails after the plan passed is reported with the plan's numbers.
  config.memory_limit = 0;
  problem.build_operators = [](TrainingProblem&) { throw std::bad_alloc(); };
  CHECK_THROWS_AS(detail::train_homogeneous_problem(problem, model, config), halo::OutOfMemoryError);
  CHECK_THROWS_WITH(detail::train_homogeneous_problem(problem, model, config),
                    Catch::Contains("although the memory plan allowed the run") && Catch::Contains("graph operators") &&
                        Catch::Contains("(" + std::to_string(fits.memory_plan.total_bytes()) + " bytes)"));
}

TEST_CASE("the plan of a precomputed first aggregation frees GCN's features, as the run does, to the byte", "[train]") {
  // The plan's tensor items against the tensors' measured peak: its other items (the process, the
  // CSR, the operators, labels and splits, the CPU SpMM's panel) are not tensors.
  const auto tensor_bytes = [](const MemoryPlan& plan) {
    std::int64_t bytes = 0;
    for (const MemoryItem& i : plan.items)
      if (i.name != "process before training" && i.name != "graph (CSR)" && i.name != "graph operators" &&
          i.name != "labels and splits" && i.name != cpu_spmm_panel_item)
        bytes += i.bytes;
    return bytes;
  };
  // 12 features: the model outweighs X, which is gone before the model exists; 400 features: X
  // and Â·X together are the peak, while Â·X is computed.
  const std::int64_t features = GENERATE(12, 400);
  ModelConfig model = small_gcn();
  model.kind = GENERATE("gcn", "sage");
  CAPTURE(features, model.kind);
  model.input_dropout = 0.0f;
  const datasets::Dataset ds = halo::test::wide_sbm(features);
  TrainConfig config = short_training(3);
  const TrainSummary plain = train(ds, model, config);
  config.precompute_first_aggregation = true;
  const TrainSummary precomputed = train(ds, model, config);
  CHECK(tensor_bytes(plain.memory_plan) == plain.tensor_peak_bytes);
  CHECK(tensor_bytes(precomputed.memory_plan) == precomputed.tensor_peak_bytes);
  // GraphSAGE's root term multiplies X beside Â·X.
  const bool gcn = model.kind == "gcn";
  CHECK(has_item(precomputed.memory_plan, "features") == !gcn);
  CHECK(has_item(precomputed.memory_plan, "features while Â·X is computed") == (gcn && features == 400));
}
