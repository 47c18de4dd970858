// Tests of a run's predictions (TrainConfig::predictions_dir): BestPredictions keeps the first
// largest logit of each row and writes every row where its id says; a trained GCN, a multi-label
// task and R-GCN write y_pred.npy in OGB's layout, and scoring that file on the test split gives
// the test accuracy (or ROC-AUC) the trainer reported at the epoch the predictions are of; a run
// resumed from a finished checkpoint writes none and says why.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "tests/support/generated_hetero.hpp"
#include "tests/support/predictions_file.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/detail/best_predictions.hpp"
#include "train/trainer.hpp"

using namespace halo;
using train::detail::BestPredictions;

TEST_CASE("BestPredictions keeps each row's first largest logit and writes every row at its id", "[train]") {
  // Row 1 ties its classes 0 and 2: the first wins, as numpy's argmax and OGB's examples pick.
  const kernels::Tensor logits =
      kernels::Tensor::from_vector(3, 3, {0.1f, 0.7f, -2.0f, 5.0f, 1.0f, 5.0f, -1.0f, -3.0f, -0.5f});
  BestPredictions kept(0);
  CHECK(kept.epoch() == 0);
  kept.offer(logits, 12, 0.5);
  CHECK(kept.epoch() == 12);
  test::ScratchDir scratch;
  train::dist::LocalCommunicator one;
  const std::vector<std::int64_t> ids{2, 0, 1};  // row k goes to ids[k]
  const std::string path = scratch / "nested/run-0003/y_pred.npy";
  kept.write(one, {ids.data(), 3}, 3, path);
  const Array<std::int64_t> classes = test::read_predicted_classes(path);
  REQUIRE(classes.rows() == 3);
  REQUIRE(classes.cols() == 1);
  CHECK(classes.ndim() == 2);
  CHECK(classes[2] == 1);
  CHECK(classes[0] == 0);
  CHECK(classes[1] == 2);

  SECTION("an id outside the file, or rows that do not fill it, are refused before anything is written") {
    const std::vector<std::int64_t> outside{0, 3, 1};
    CHECK_THROWS_WITH(kept.write(one, {outside.data(), 3}, 3, scratch / "a.npy"),
                      Catch::Contains("row 1 has id 3, outside 0 .. 2"));
    CHECK_THROWS_WITH(kept.write(one, {}, 4, scratch / "b.npy"), Catch::Contains("the ranks hold 3 rows of the 4"));
    CHECK_FALSE(std::filesystem::exists(scratch / "a.npy"));
    CHECK_FALSE(std::filesystem::exists(scratch / "b.npy"));
  }
  SECTION("a multi-label task keeps the scores themselves") {
    BestPredictions scores(3);
    scores.offer(logits, 4, 0.5);
    scores.write(one, {ids.data(), 3}, 3, scratch / "scores.npy");
    const Array<float> back = datasets::read_npy<float>(scratch / "scores.npy");
    REQUIRE(back.rows() == 3);
    REQUIRE(back.cols() == 3);
    CHECK(back.row(2)[1] == 0.7f);
    CHECK(back.row(0)[2] == 5.0f);
    CHECK(back.row(1)[0] == -1.0f);
  }
}

TEST_CASE("A trained GCN's predictions score the test accuracy reported at their epoch, over a file there before",
          "[train]") {
  const datasets::Dataset ds = test::small_sbm();
  test::ScratchDir scratch;
  train::TrainConfig c = test::short_training(30);
  c.eval_every = 3;
  c.predictions_dir = scratch / "predictions";
  const std::string path = c.predictions_dir + "/run-0000/y_pred.npy";
  std::filesystem::create_directories(c.predictions_dir + "/run-0000");
  std::ofstream(path) << "poison: not a .npy file";
  const train::TrainSummary s = train::train(ds, test::small_gcn(), c);
  const train::RunResult& r = s.runs.at(0);
  CHECK(r.predictions_path == path);
  CHECK(r.predictions_epoch == r.best_epoch);
  CHECK(r.best_epoch % 3 == 0);
  const Array<std::int64_t> classes = test::read_predicted_classes(path);
  REQUIRE(classes.rows() == ds.num_vertices());
  REQUIRE(classes.cols() == 1);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ds.meta.num_classes), 0);
  for (const std::int64_t k : classes) {
    REQUIRE(k >= 0);
    REQUIRE(k < ds.meta.num_classes);
    ++counts[static_cast<std::size_t>(k)];
  }
  const std::int64_t* labels = ds.target().labels.data();
  CHECK(test::predicted_accuracy(classes, labels, kernels::view_of(ds.split.test)) == r.test_acc);
  CHECK(test::predicted_accuracy(classes, labels, kernels::view_of(ds.split.valid)) == r.valid_acc);
  CHECK(r.test_acc > 0.6);  // it learnt: the file is not one class everywhere
}

TEST_CASE("A multi-label task's predictions are its scores, which give the ROC-AUC reported", "[train]") {
  const datasets::Dataset ds = test::multilabel_sbm(4);
  test::ScratchDir scratch;
  train::TrainConfig c = test::short_training(20);
  c.predictions_dir = scratch.path();
  const train::TrainSummary s = train::train(ds, test::small_gcn(), c);
  const train::RunResult& r = s.runs.at(0);
  const Array<float> scores = datasets::read_npy<float>(r.predictions_path);
  CHECK(scores.rows() == ds.num_vertices());
  CHECK(scores.cols() == 4);
  CHECK(test::predicted_roc_auc(r.predictions_path, ds.target().labels.data(), kernels::view_of(ds.split.test)) ==
        Approx(r.test_acc).epsilon(1e-12));
  CHECK(r.test_acc > 0.7);
}

TEST_CASE("R-GCN's predictions cover the labelled type's vertices and score the test accuracy reported", "[train]") {
  datasets::Dataset ds = test::generated_hetero();
  test::ScratchDir scratch;
  train::TrainConfig c = test::short_training(15);
  c.predictions_dir = scratch.path();
  c.runs = 2;
  const train::TrainSummary s = train::train(ds, test::rgcn_model(), c);
  for (const train::RunResult& r : s.runs) {
    CAPTURE(r.run);
    CHECK(r.predictions_path == scratch / ("run-000" + std::to_string(r.run) + "/y_pred.npy"));
    const Array<std::int64_t> classes = test::read_predicted_classes(r.predictions_path);
    CHECK(classes.rows() == ds.target().count);
    CHECK(test::predicted_accuracy(classes, ds.target().labels.data(), kernels::view_of(ds.split.test)) == r.test_acc);
  }
}

TEST_CASE("A run resumed from its finished checkpoint writes no predictions and says why", "[train]") {
  const datasets::Dataset ds = test::small_sbm();
  test::ScratchDir scratch;
  train::TrainConfig c = test::short_training(4);
  c.checkpoint_dir = scratch / "ckpt";
  train::train(ds, test::small_gcn(), c);
  c.resume = true;
  c.predictions_dir = scratch / "predictions";
  std::vector<std::string> warnings;
  set_log_sink(
      [&](LogLevel, const std::string& m) {
        if (m.rfind("OpenBLAS", 0) != 0) warnings.push_back(m);
      },
      LogLevel::warning);
  const train::TrainSummary s = train::train(ds, test::small_gcn(), c);
  set_log_sink(nullptr);
  CHECK(s.runs.at(0).predictions_path.empty());
  CHECK_FALSE(std::filesystem::exists(c.predictions_dir));
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("run 0: no predictions written") && Catch::Contains("without --resume"));
}
