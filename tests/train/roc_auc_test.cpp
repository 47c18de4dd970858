// Tests of train/roc_auc.*: OGB's ROC-AUC against a brute-force count over every (positive,
// negative) pair (ties half), with ties, unlabelled entries and single-class tasks; the closed
// forms; sklearn's documented example; and the errors.
#include "train/roc_auc.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "tests/support/thread_count.hpp"

using namespace halo;
using namespace halo::train;
using Catch::Matchers::Contains;

namespace {

struct Problem {
  std::int64_t rows = 0, tasks = 0;
  std::vector<float> scores;
  std::vector<std::int64_t> labels;
  std::vector<std::int64_t> subset;

  kernels::ConstTensorView view() const { return {scores.data(), rows, tasks, tasks, kernels::Device::cpu()}; }
  kernels::IndexView rows_view() const { return {subset.data(), static_cast<std::int64_t>(subset.size())}; }
  double auc() const { return roc_auc(view(), labels.data(), rows_view()); }
};

// The mean over tasks with both classes of P(score_pos > score_neg) + P(equal) / 2, by pairs.
double brute_force(const Problem& p) {
  double sum = 0;
  int defined = 0;
  for (std::int64_t t = 0; t < p.tasks; ++t) {
    std::vector<double> pos, neg;
    for (std::int64_t r : p.subset) {
      const std::int64_t y = p.labels[static_cast<std::size_t>(r * p.tasks + t)];
      const double s = p.scores[static_cast<std::size_t>(r * p.tasks + t)];
      if (y == 1) pos.push_back(s);
      if (y == 0) neg.push_back(s);
    }
    if (pos.empty() || neg.empty()) continue;
    double wins = 0;
    for (double a : pos)
      for (double b : neg) wins += a > b ? 1.0 : a == b ? 0.5 : 0.0;
    sum += wins / (static_cast<double>(pos.size()) * static_cast<double>(neg.size()));
    ++defined;
  }
  return sum / defined;
}

// Scores from a few levels (many ties), labels leaning on the score, a quarter unlabelled; task 0
// has negatives only, so it is skipped.
Problem random_problem(std::int64_t rows, std::int64_t tasks, std::uint64_t seed) {
  Problem p;
  p.rows = rows;
  p.tasks = tasks;
  RandomStream rs(seed, 0);
  for (std::int64_t i = 0; i < rows * tasks; ++i) {
    const float s = static_cast<float>(rs.below(7)) - 3.0f;
    p.scores.push_back(s);
    const bool labelled = rs.below(4) != 0;
    const bool positive = rs.below(10) < static_cast<std::uint64_t>(5 + s);
    p.labels.push_back(!labelled ? -1 : (i % tasks == 0) ? 0 : positive);
  }
  for (std::int64_t r = 0; r < rows; r += 1 + static_cast<std::int64_t>(rs.below(2))) p.subset.push_back(r);
  return p;
}

}  // namespace

TEST_CASE("roc_auc equals the pair count over positives and negatives with ties and unlabelled rows", "[train]") {
  for (std::uint64_t seed : {1, 2, 3}) {
    const Problem p = random_problem(400, 6, seed);
    const double expected = brute_force(p);
    CHECK(p.auc() == Approx(expected).epsilon(1e-13));
    CHECK(expected > 0.55);  // the labels do lean on the scores
    const double one = test::with_threads(1, [&] { return p.auc(); });
    const double two = test::with_threads(2, [&] { return p.auc(); });
    CHECK(one == two);
  }
}

TEST_CASE("roc_auc gives the closed forms and sklearn's documented example", "[train]") {
  Problem p;
  p.rows = 4;
  p.tasks = 1;
  p.subset = {0, 1, 2, 3};
  p.labels = {0, 0, 1, 1};
  p.scores = {0.1f, 0.4f, 0.35f, 0.8f};  // sklearn.metrics.roc_auc_score's example: 0.75
  CHECK(p.auc() == Approx(0.75).epsilon(1e-15));
  p.scores = {0.1f, 0.2f, 0.3f, 0.4f};
  CHECK(p.auc() == 1.0);
  p.scores = {0.4f, 0.3f, 0.2f, 0.1f};
  CHECK(p.auc() == 0.0);
  p.scores = {0.5f, 0.5f, 0.5f, 0.5f};
  CHECK(p.auc() == 0.5);
}

TEST_CASE("roc_auc refuses bad labels and NaN scores and an undefined area", "[train]") {
  Problem p;
  p.rows = 3;
  p.tasks = 2;
  p.subset = {0, 1, 2};
  p.labels = {0, 1, 1, 0, -1, 1};
  p.scores = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
  CHECK(p.auc() == Approx(0.75));  // task 0: 1.0 (0.3 over 0.1); task 1: 0.5 (0.2 over 0.4, 0.6 over 0.4)
  p.labels[3] = 2;
  CHECK_THROWS_WITH(p.auc(), Contains("row 1, task 1: label 2"));
  p.labels[3] = 0;
  p.scores[2] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(p.auc(), Contains("row 1, task 0: the score is NaN"));
  p.scores[2] = 0.3f;
  p.subset = {0, 3};
  CHECK_THROWS_WITH(p.auc(), Contains("row 3 (entry 1) is outside the 3 rows"));
  p.subset = {0};
  CHECK_THROWS_AS(p.auc(), InvalidArgument);
  CHECK_THROWS_WITH(p.auc(), Contains("none of the 2 tasks has both classes"));
}
