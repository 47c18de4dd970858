// Tests of kernels/loss.*: the summed log-softmax NLL against a double reference, its gradient
// against central finite differences of that reference, zero gradient outside the mask, the
// thread-count independence of the sum, accuracy with ties, and the checks on labels and mask.
#include "kernels/loss.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

// Every third row, in descending order (masks need not be sorted).
std::vector<std::int64_t> every_third_row(std::int64_t rows) {
  std::vector<std::int64_t> mask;
  for (std::int64_t r = rows - 1; r >= 0; r -= 3) mask.push_back(r);
  return mask;
}

}  // namespace

TEST_CASE("log_softmax_nll sums the NLL of the masked rows like the double reference", "[kernels]") {
  RandomStream rng(71, 0);
  const Tensor logits = test::random_tensor(rng, 90, 7, -4.0, 4.0);
  const std::vector<std::int64_t> labels = test::random_labels(rng, 90, 7);
  const std::vector<std::int64_t> mask = every_third_row(90);
  const LossSum sum = log_softmax_nll(logits.view(), labels.data(), test::index_view(mask), 1.0f, {});
  CHECK(sum.count == 30);
  CHECK(sum.loss_sum == Approx(test::naive_nll(test::to_dense(logits.view()), labels, mask)).epsilon(1e-12));
}

TEST_CASE("log_softmax_nll is stable for large logits", "[kernels]") {
  // Rows [1000, 0] and [-1000, 1000]: the losses are about 0 and 2000.
  const Tensor logits = Tensor::from_vector(2, 2, {1000.0f, 0.0f, -1000.0f, 1000.0f});
  const std::vector<std::int64_t> labels{0, 0};
  const std::vector<std::int64_t> mask{0, 1};
  Tensor grad = test::poisoned(2, 2);
  const LossSum sum = log_softmax_nll(logits.view(), labels.data(), test::index_view(mask), 1.0f, grad.view());
  CHECK(sum.loss_sum == Approx(2000.0));
  CHECK(grad.to_vector() == std::vector<float>{0.0f, 0.0f, -1.0f, 1.0f});
}

TEST_CASE("log_softmax_nll's gradient matches finite differences and is 0 outside the mask", "[kernels]") {
  RandomStream rng(72, 0);
  const std::int64_t rows = 25, classes = 6;
  const Tensor logits = test::random_tensor(rng, rows, classes, -3.0, 3.0);
  const std::vector<std::int64_t> labels = test::random_labels(rng, rows, classes);
  const std::vector<std::int64_t> mask = every_third_row(rows);
  const float scale = 1.0f / static_cast<float>(mask.size());
  Tensor grad = test::poisoned(rows, classes);
  log_softmax_nll(logits.view(), labels.data(), test::index_view(mask), scale, grad.view());
  test::Dense z = test::to_dense(logits.view());
  test::Dense numeric(rows, classes);
  const double h = 1e-5;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < classes; ++j) {
      const double saved = z(i, j);
      z(i, j) = saved + h;
      const double up = test::naive_nll(z, labels, mask);
      z(i, j) = saved - h;
      const double down = test::naive_nll(z, labels, mask);
      z(i, j) = saved;
      numeric(i, j) = (up - down) / (2.0 * h) * scale;
    }
  CHECK(test::difference(grad.view(), numeric, 1e-4, 1e-6) == "");
  for (std::int64_t i = 0; i < rows; ++i)
    if (i % 3 != (rows - 1) % 3)
      for (std::int64_t j = 0; j < classes; ++j) CHECK(grad.view().row(i)[j] == 0.0f);
}

TEST_CASE("log_softmax_nll gives the same sum on 1, 2 and 3 threads", "[kernels]") {
  RandomStream rng(73, 0);
  const Tensor logits = test::random_tensor(rng, 20000, 5, -3.0, 3.0);
  const std::vector<std::int64_t> labels = test::random_labels(rng, 20000, 5);
  const std::vector<std::int64_t> mask = every_third_row(20000);
  double one = 0.0;
  test::with_threads(1, [&] { one = log_softmax_nll(logits.view(), labels.data(), test::index_view(mask), 1.0f, {}).loss_sum; });
  for (const int threads : {2, 3}) {
    double other = 0.0;
    test::with_threads(
        threads, [&] { other = log_softmax_nll(logits.view(), labels.data(), test::index_view(mask), 1.0f, {}).loss_sum; });
    CHECK(other == one);
  }
}

//  row 0: [1 3 3] label 1 -> arg-max is 1 (lowest of the tied 1 and 2): correct
//  row 1: [5 1 0] label 2 -> wrong;  row 2: [0 0 9] label 2 -> correct (not in the mask below)
TEST_CASE("count_correct counts arg-max hits, resolving ties to the lowest index", "[kernels]") {
  const Tensor logits = Tensor::from_vector(3, 3, {1, 3, 3, 5, 1, 0, 0, 0, 9});
  const std::vector<std::int64_t> labels{1, 2, 2};
  CHECK(count_correct(logits.view(), labels.data(), test::index_view(std::vector<std::int64_t>{0, 1})) == 1);
  CHECK(count_correct(logits.view(), labels.data(), test::index_view(std::vector<std::int64_t>{0, 1, 2})) == 2);
  const std::vector<std::int64_t> tie_high{2, 2, 2};
  CHECK(count_correct(logits.view(), tie_high.data(), test::index_view(std::vector<std::int64_t>{0})) == 0);
}

TEST_CASE("log_softmax_nll names bad labels, out-of-range rows and repeated rows", "[kernels]") {
  const Tensor logits = Tensor::zeros(3, 2);
  Tensor grad = Tensor::zeros(3, 2);
  const std::vector<std::int64_t> labels{0, 2, 1};
  CHECK_THROWS_WITH(log_softmax_nll(logits.view(), labels.data(), test::index_view(std::vector<std::int64_t>{0, 1}), 1.0f, {}),
                    Catch::Contains("labels[1] = 2 is outside [0, 2)"));
  const std::vector<std::int64_t> good{0, 1, 1};
  CHECK_THROWS_WITH(count_correct(logits.view(), good.data(), test::index_view(std::vector<std::int64_t>{3})),
                    Catch::Contains("mask[0] = 3 is outside [0, 3)"));
  CHECK_THROWS_WITH(
      log_softmax_nll(logits.view(), good.data(), test::index_view(std::vector<std::int64_t>{2, 0, 2}), 1.0f, grad.view()),
      Catch::Contains("row 2 is listed twice"));
  Tensor small = Tensor::zeros(2, 2);
  CHECK_THROWS_WITH(
      log_softmax_nll(logits.view(), good.data(), test::index_view(std::vector<std::int64_t>{0}), 1.0f, small.view()),
      Catch::Contains("grad must be 3 x 2, got 2 x 2"));
}
