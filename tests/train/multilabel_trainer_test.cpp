// Tests of multi-label training (ogbn-proteins' task): train() on a generated SBM graph whose
// vertices carry several binary tasks learns them (the BCE falls from ln 2, OGB's ROC-AUC far
// above 0.5), reports the metric it used, does not depend on the thread count, and refuses labels
// of the wrong width.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/trainer.hpp"

using namespace halo::train;
namespace datasets = halo::datasets;
using halo::Array;
using halo::RandomStream;
using halo::test::short_training;
using halo::test::small_gcn;

namespace {

// small_sbm with `tasks` binary tasks in place of its class: task t of vertex v is 1 when v's
// class is t mod 3, flipped for 5 % of the entries, unlabelled (-1) for 10 %.
datasets::Dataset multilabel_sbm(std::int64_t tasks) {
  datasets::Dataset ds = halo::test::small_sbm();
  datasets::NodeType& t = ds.node_types[0];
  Array<std::int64_t> y = Array<std::int64_t>::matrix(t.count, tasks);
  RandomStream rs(3, 0);
  for (std::int64_t v = 0; v < t.count; ++v)
    for (std::int64_t j = 0; j < tasks; ++j) {
      const std::uint64_t draw = rs.below(100);
      const std::int64_t truth = t.labels[v] == j % 3 ? 1 : 0;
      y[v * tasks + j] = draw < 10 ? -1 : draw < 15 ? 1 - truth : truth;
    }
  t.labels = std::move(y);
  ds.meta.task = datasets::Task::multilabel;
  ds.meta.num_tasks = tasks;
  ds.meta.num_classes = 2;
  return ds;
}

}  // namespace

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
