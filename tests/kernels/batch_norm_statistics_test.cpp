// Tests of kernels/batch_norm.* batch_norm_statistics and batch_norm_running_statistics on the
// CPU: the training statistics from batch_norm_sums against a two-pass double reference (mean,
// biased variance, PyTorch's running update), the clamp of a variance that rounding makes
// negative, the evaluation statistics, and the operand checks.
#include "kernels/batch_norm.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

constexpr float eps = 1e-5f;

}  // namespace

TEST_CASE("batch_norm_statistics gives the two-pass mean, variance and running update", "[kernels]") {
  RandomStream rng(131, 0);
  const std::int64_t rows = GENERATE(2, 37, 3000);
  const std::int64_t cols = 7;
  const float momentum = GENERATE(0.0f, 0.1f, 1.0f);
  CAPTURE(rows, momentum);
  // Columns with offsets of their own, so mean and variance differ per column.
  Tensor x = test::random_tensor(rng, rows, cols, -1.0, 1.0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) x.view().row(i)[j] = x.view().row(i)[j] * (1.0f + j) + 0.25f * j;
  const Tensor old_mean = test::random_tensor(rng, 1, cols, -1.0, 1.0);
  const Tensor old_var = test::random_tensor(rng, 1, cols, 0.5, 2.0);

  Tensor sums = test::poisoned(2, cols);
  batch_norm_sums(x.view(), sums.view());
  Tensor stats = test::poisoned(2, cols);
  Tensor running_mean = Tensor::empty(1, cols), running_var = Tensor::empty(1, cols);
  running_mean.copy_from(old_mean.view());
  running_var.copy_from(old_var.view());
  const auto n = static_cast<double>(rows);
  batch_norm_statistics(sums.view(), n, eps, momentum, stats.view(), running_mean.view(), running_var.view());

  test::Dense expected_stats(2, cols), expected_mean(1, cols), expected_var(1, cols);
  for (std::int64_t j = 0; j < cols; ++j) {
    double mean = 0.0;
    for (std::int64_t i = 0; i < rows; ++i) mean += x.view().row(i)[j];
    mean /= n;
    double var = 0.0;
    for (std::int64_t i = 0; i < rows; ++i) var += (x.view().row(i)[j] - mean) * (x.view().row(i)[j] - mean);
    var /= n;
    expected_stats(0, j) = mean;
    expected_stats(1, j) = 1.0 / std::sqrt(var + eps);
    expected_mean(0, j) = (1.0 - momentum) * old_mean.view().row(0)[j] + momentum * mean;
    expected_var(0, j) = (1.0 - momentum) * old_var.view().row(0)[j] + momentum * var * n / (n - 1);
  }
  CHECK(test::difference(stats.view(), expected_stats, 1e-5, 1e-6) == "");
  CHECK(test::difference(running_mean.view(), expected_mean, 1e-5, 1e-6) == "");
  CHECK(test::difference(running_var.view(), expected_var, 1e-5, 1e-6) == "");
}

TEST_CASE("batch_norm_statistics clamps a variance that rounding made negative", "[kernels]") {
  // Four rows whose squares sum to slightly less than n · mean²: E[x²] - E[x]² < 0.
  const Tensor sums = Tensor::from_vector(2, 1, {1.0f, 0.2499f});
  Tensor stats = test::poisoned(2, 1);
  Tensor running_mean = Tensor::full(1, 1, 2.0f), running_var = Tensor::full(1, 1, 1.0f);
  batch_norm_statistics(sums.view(), 4.0, eps, 0.5f, stats.view(), running_mean.view(), running_var.view());
  CHECK(stats.view().row(0)[0] == 0.25f);
  CHECK(stats.view().row(1)[0] == static_cast<float>(1.0 / std::sqrt(static_cast<double>(eps))));
  CHECK(running_mean.view().data[0] == 1.125f);
  CHECK(running_var.view().data[0] == 0.5f);
}

TEST_CASE("batch_norm_running_statistics gives the running mean and inverse deviation", "[kernels]") {
  RandomStream rng(132, 0);
  const Tensor mean = test::random_tensor(rng, 1, 9, -3.0, 3.0);
  const Tensor var = test::random_tensor(rng, 1, 9, 0.01, 4.0);
  Tensor stats = test::poisoned(2, 9);
  batch_norm_running_statistics(mean.view(), var.view(), eps, stats.view());
  test::Dense expected(2, 9);
  for (std::int64_t j = 0; j < 9; ++j) {
    expected(0, j) = mean.view().data[j];
    expected(1, j) = 1.0 / std::sqrt(static_cast<double>(var.view().data[j]) + eps);
  }
  CHECK(test::difference(stats.view(), expected, 1e-6, 0.0) == "");
}

TEST_CASE("the batch-norm statistics check their operands", "[kernels]") {
  const Tensor sums = Tensor::from_vector(2, 2, {1.0f, 2.0f, 3.0f, 4.0f});
  Tensor stats = Tensor::empty(2, 2), mean = Tensor::zeros(1, 2), var = Tensor::full(1, 2, 1.0f);
  Tensor narrow = Tensor::empty(2, 1);
  CHECK_THROWS_AS(batch_norm_statistics(sums.view(), 1.0, eps, 0.1f, stats.view(), mean.view(), var.view()),
                  InvalidArgument);
  CHECK_THROWS_AS(batch_norm_statistics(sums.view(), 4.0, eps, 1.5f, stats.view(), mean.view(), var.view()),
                  InvalidArgument);
  CHECK_THROWS_AS(batch_norm_statistics(sums.view(), 4.0, eps, 0.1f, narrow.view(), mean.view(), var.view()),
                  InvalidArgument);
  CHECK_THROWS_AS(batch_norm_statistics(sums.view(), 4.0, eps, 0.1f, stats.view(), mean.view(), mean.view()),
                  InvalidArgument);
  CHECK_THROWS_AS(batch_norm_running_statistics(mean.view(), var.view(), 0.0f, stats.view()), InvalidArgument);
  CHECK_THROWS_AS(batch_norm_running_statistics(mean.view(), var.view(), eps, narrow.view()), InvalidArgument);
}
