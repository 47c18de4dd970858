// Tests of kernels/batch_norm.*: the four passes composed into a full batch norm (statistics from
// the sums, forward, backward sums, backward) against the double definition, and its input
// gradient against central finite differences in double.
#include "kernels/batch_norm.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/base/error.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

constexpr double eps = 1e-5;

// mean and inv_std (2 x cols) from batch_norm_sums, as a layer computes them.
Tensor stats_from_sums(const Tensor& sums, std::int64_t n) {
  Tensor stats = Tensor::empty(2, sums.cols());
  for (std::int64_t j = 0; j < sums.cols(); ++j) {
    const double mean = sums.view().row(0)[j] / static_cast<double>(n);
    const double var = sums.view().row(1)[j] / static_cast<double>(n) - mean * mean;
    stats.view().row(0)[j] = static_cast<float>(mean);
    stats.view().row(1)[j] = static_cast<float>(1.0 / std::sqrt(var + eps));
  }
  return stats;
}

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out;
  for (const float v : t.to_vector()) out.push_back(v);
  return out;
}

}  // namespace

TEST_CASE("batch_norm_sums and batch_norm_forward reproduce the double definition", "[kernels]") {
  RandomStream rng(81, 0);
  const std::int64_t n = 700, cols = 9;
  const Tensor x = test::random_tensor(rng, n, cols, -1.0, 3.0);
  const Tensor gamma = test::random_tensor(rng, 1, cols, 0.5, 1.5);
  const Tensor beta = test::random_tensor(rng, 1, cols);
  Tensor sums = test::poisoned(2, cols);
  batch_norm_sums(x.view(), sums.view());
  test::Dense expected_sums(2, cols);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = x.view().row(i)[j];
      expected_sums(0, j) += v;
      expected_sums(1, j) += v * v;
    }
  CHECK(test::difference(sums.view(), expected_sums, 1e-6, 1e-6) == "");

  const Tensor stats = stats_from_sums(sums, n);
  Tensor y = test::poisoned(n, cols);
  batch_norm_forward(x.view(), stats.view(), gamma.view(), beta.view(), y.view());
  const test::NaiveBatchNorm bn =
      test::naive_batch_norm(test::to_dense(x.view()), as_doubles(gamma), as_doubles(beta), eps);
  CHECK(test::difference(y.view(), bn.y, 1e-3, 1e-3) == "");
}

TEST_CASE("the batch-norm backward passes give the finite-difference gradients", "[kernels]") {
  RandomStream rng(82, 0);
  const std::int64_t n = 40, cols = 5;
  const Tensor x = test::random_tensor(rng, n, cols, -1.0, 2.0);
  const Tensor gamma = test::random_tensor(rng, 1, cols, 0.5, 1.5);
  const Tensor beta = test::random_tensor(rng, 1, cols);
  const Tensor r = test::random_tensor(rng, n, cols);  // loss = Σ r · y, so grad_y = r
  Tensor sums = Tensor::empty(2, cols);
  batch_norm_sums(x.view(), sums.view());
  const Tensor stats = stats_from_sums(sums, n);
  Tensor reduce = test::poisoned(2, cols);
  batch_norm_backward_sums(x.view(), stats.view(), r.view(), reduce.view());
  Tensor grad_x = test::poisoned(n, cols);
  Tensor grad_gamma = Tensor::full(1, cols, 1.0f);
  Tensor grad_beta = Tensor::full(1, cols, -1.0f);
  batch_norm_backward(x.view(), stats.view(), gamma.view(), r.view(), reduce.view(), static_cast<double>(n),
                      grad_x.view(), grad_gamma.view(), grad_beta.view());

  const std::vector<double> g = as_doubles(gamma), b = as_doubles(beta);
  const test::Dense rd = test::to_dense(r.view());
  const auto loss = [&](const test::Dense& xd, const std::vector<double>& gd, const std::vector<double>& bd) {
    const test::NaiveBatchNorm bn = test::naive_batch_norm(xd, gd, bd, eps);
    double s = 0.0;
    for (std::size_t k = 0; k < bn.y.v.size(); ++k) s += rd.v[k] * bn.y.v[k];
    return s;
  };
  const double h = 1e-6;
  test::Dense xd = test::to_dense(x.view());
  test::Dense numeric_x(n, cols);
  for (std::size_t k = 0; k < xd.v.size(); ++k) {
    const double saved = xd.v[k];
    xd.v[k] = saved + h;
    const double up = loss(xd, g, b);
    xd.v[k] = saved - h;
    const double down = loss(xd, g, b);
    xd.v[k] = saved;
    numeric_x.v[k] = (up - down) / (2.0 * h);
  }
  CHECK(test::difference(grad_x.view(), numeric_x, 2e-3, 2e-3) == "");

  test::Dense numeric_gamma(1, cols), numeric_beta(1, cols);
  for (std::int64_t j = 0; j < cols; ++j) {
    std::vector<double> gp = g, gm = g, bp = b, bm = b;
    gp[static_cast<std::size_t>(j)] += h;
    gm[static_cast<std::size_t>(j)] -= h;
    bp[static_cast<std::size_t>(j)] += h;
    bm[static_cast<std::size_t>(j)] -= h;
    numeric_gamma(0, j) = 1.0 + (loss(xd, gp, b) - loss(xd, gm, b)) / (2.0 * h);  // grad_gamma started at 1
    numeric_beta(0, j) = -1.0 + (loss(xd, g, bp) - loss(xd, g, bm)) / (2.0 * h);  // grad_beta started at -1
  }
  CHECK(test::difference(grad_gamma.view(), numeric_gamma, 2e-3, 2e-3) == "");
  CHECK(test::difference(grad_beta.view(), numeric_beta, 2e-3, 2e-3) == "");
}

TEST_CASE("batch_norm_sums ignores the thread count, and the passes check their shapes", "[kernels]") {
  RandomStream rng(83, 0);
  const Tensor x = test::random_tensor(rng, 6000, 4);
  Tensor one = Tensor::empty(2, 4);
  test::with_threads(1, [&] { batch_norm_sums(x.view(), one.view()); });
  Tensor three = Tensor::empty(2, 4);
  test::with_threads(3, [&] { batch_norm_sums(x.view(), three.view()); });
  CHECK(test::identical(one.view(), three.view()));
  Tensor wrong = Tensor::empty(1, 4);
  CHECK_THROWS_WITH(batch_norm_sums(x.view(), wrong.view()), Catch::Contains("sums must be 2 x 4, got 1 x 4"));
  Tensor y = Tensor::empty(6000, 4);
  CHECK_THROWS_WITH(
      batch_norm_forward(x.view(), one.view(), Tensor::zeros(1, 3).view(), Tensor::zeros(1, 4).view(), y.view()),
      Catch::Contains("gamma must be 1 x 4, got 1 x 3"));
}
