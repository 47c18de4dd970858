// Tests of multi-label training (ogbn-proteins' task): train() on a generated SBM graph whose
// vertices carry several binary tasks learns them (the BCE falls from ln 2, OGB's ROC-AUC far
// above 0.5), reports the metric it used, does not depend on the thread count, and refuses labels
// of the wrong width.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "graph/base/error.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/trainer.hpp"

using namespace halo::train;
namespace datasets = halo::datasets;
using halo::test::short_training;
using halo::test::small_gcn;

using halo::test::multilabel_sbm;

TEST_CASE("train learns a multi-label task and reports OGB's ROC-AUC", "[train]") {
  const datasets::Dataset ds = multilabel_sbm(5);
  ModelConfig model = small_gcn();
  SECTION("gcn") {}
  SECTION("sage") { model.kind = "sage"; }
  const TrainSummary s = train(ds, model, short_training(60));
  REQUIRE(s.runs.size() == 1);
  const RunResult& r = s.runs[0];
  INFO(model.kind << " first loss " << r.epochs.front().loss << ", last " << r.epochs.back().loss << ", test "
                  << r.test_acc);
  CHECK(s.metric == "rocauc");
  // A mean over the labelled entries: about ln 2 each for the small logits of an untrained model.
  CHECK(r.epochs.front().loss > std::log(2.0) - 0.1);
  CHECK(r.epochs.front().loss < 1.2);
  CHECK(r.epochs.back().loss < 0.75 * r.epochs.front().loss);
  CHECK(r.test_acc > 0.85);
  CHECK(r.epochs.back().train_acc > 0.85);
  CHECK(s.test_acc_mean == r.test_acc);
}

TEST_CASE("multi-label training gives the same losses with one and with two threads", "[train]") {
  const datasets::Dataset ds = multilabel_sbm(4);
  TrainConfig one = short_training(5);
  one.threads = 1;
  TrainConfig two = short_training(5);
  two.threads = 2;
  const TrainSummary a = train(ds, small_gcn(), one);
  const TrainSummary b = train(ds, small_gcn(), two);
  for (std::size_t e = 0; e < a.runs[0].epochs.size(); ++e)
    CHECK(a.runs[0].epochs[e].loss == Approx(b.runs[0].epochs[e].loss).epsilon(1e-5));
}

TEST_CASE("multi-label training refuses labels of another width than the task count", "[train]") {
  datasets::Dataset ds = multilabel_sbm(4);
  ds.meta.num_tasks = 5;
  CHECK_THROWS_WITH(train(ds, small_gcn(), short_training(2)), Catch::Contains("needs 5 label(s) per vertex"));
}
