// The check every P-invariance test makes: training on P ranks computed what one process
// computed — as many epochs, per-epoch losses within 1e-5 relative, the same accuracies.
#pragma once

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstddef>

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

}  // namespace halo::test
