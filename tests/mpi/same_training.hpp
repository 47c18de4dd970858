// The check every P-invariance test makes: training on P ranks computed what one process
// computed — as many epochs, per-epoch losses within 1e-5 relative, the same accuracies; and,
// where they were written, the same predictions.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>

#include "tests/support/predictions_file.hpp"
#include "train/trainer.hpp"

namespace halo::test {

inline void check_same_training(const train::TrainSummary& one, const train::TrainSummary& many) {
  const auto& a = one.runs.at(0).epochs;
  const auto& b = many.runs.at(0).epochs;
  CHECK(a.size() == b.size());
  double worst = 0.0;
  for (std::size_t e = 0; e < std::min(a.size(), b.size()); ++e)
    worst = std::max(worst, std::abs(a[e].loss - b[e].loss) / std::abs(a[e].loss));
  CAPTURE(worst);
  CHECK(worst < 1e-5);
  CHECK(one.runs[0].test_acc == many.runs[0].test_acc);
  CHECK(one.runs[0].valid_acc == many.runs[0].valid_acc);
  CHECK(a.back().train_acc == b.back().train_acc);
  CHECK(a.back().test_acc == b.back().test_acc);
}

// The predictions both wrote (TrainConfig::predictions_dir, one class per vertex): rank 0 of P
// gathered every rank's rows in the dataset's order, so each file scores its run's test accuracy
// on `test`, and they agree but for rows whose two best logits are within rounding of each other.
inline void check_same_predictions(const train::TrainSummary& one, const train::TrainSummary& many,
                                   const std::int64_t* labels, kernels::IndexView test) {
  const train::RunResult& a = one.runs.at(0);
  const train::RunResult& b = many.runs.at(0);
  CHECK(a.predictions_epoch == b.predictions_epoch);
  const Array<std::int64_t> from_one = read_predicted_classes(a.predictions_path);
  const Array<std::int64_t> from_many = read_predicted_classes(b.predictions_path);
  CHECK(predicted_accuracy(from_one, labels, test) == a.test_acc);
  CHECK(predicted_accuracy(from_many, labels, test) == b.test_acc);
  REQUIRE(from_one.size() == from_many.size());
  std::int64_t differ = 0;
  for (std::int64_t v = 0; v < from_one.size(); ++v) differ += from_one[v] != from_many[v];
  CAPTURE(differ);
  CHECK(differ * 200 <= from_one.size());
}

}  // namespace halo::test
