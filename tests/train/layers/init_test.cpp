// Tests of train/layers/init.*: zero parameters, and Glorot-uniform weights: their range and spread, and
// their dependence on (seed, index) only, and rows of a whole tensor drawn on their own.
#include "train/layers/init.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

using namespace halo;
using namespace halo::train;

TEST_CASE("make_parameter gives a zero value and gradient of the asked shape", "[train]") {
  const Parameter p = make_parameter("conv0.weight", 3, 5, kernels::Device::cpu(), 5e-4f);
  CHECK(p.name == "conv0.weight");
  CHECK(p.value.rows() == 3);
  CHECK(p.grad.cols() == 5);
  CHECK(p.weight_decay == 5e-4f);
  CHECK(p.value.to_vector() == std::vector<float>(15, 0.0f));
  CHECK(p.grad.to_vector() == std::vector<float>(15, 0.0f));
}

TEST_CASE("glorot_uniform fills U(-a, a) with a = sqrt(6 / (fan_in + fan_out))", "[train]") {
  kernels::Tensor w = kernels::Tensor::zeros(200, 100);
  glorot_uniform(w, 42, 0);
  const double a = std::sqrt(6.0 / 300.0);
  double sum = 0.0, sum_sq = 0.0, largest = 0.0;
  for (float v : w.to_vector()) {
    sum += v;
    sum_sq += static_cast<double>(v) * v;
    largest = std::max(largest, std::abs(static_cast<double>(v)));
  }
  const double n = 20000.0;
  CHECK(largest <= a);
  CHECK(largest > 0.99 * a);
  // Mean 0 and variance a²/3, to within a few standard errors.
  CHECK(std::abs(sum / n) < 5.0 * a / std::sqrt(3.0 * n));
  CHECK(sum_sq / n == Approx(a * a / 3.0).epsilon(0.03));
}

TEST_CASE("glorot_uniform depends only on the seed and the parameter index", "[train]") {
  const auto draw = [](std::uint64_t seed, std::uint64_t index) {
    kernels::Tensor w = kernels::Tensor::zeros(7, 3);
    glorot_uniform(w, seed, index);
    return w.to_vector();
  };
  CHECK(draw(1, 0) == draw(1, 0));
  CHECK(draw(1, 0) != draw(2, 0));
  CHECK(draw(1, 0) != draw(1, 1));
}

TEST_CASE("glorot_uniform_rows draws exactly the chosen rows of the whole tensor", "[train]") {
  kernels::Tensor whole = kernels::Tensor::zeros(9, 5);
  glorot_uniform(whole, 17, 3);
  const std::vector<float> all = whole.to_vector();
  // Rows out of order, repeated, and the first and last.
  const std::vector<std::int64_t> rows{8, 0, 4, 4, 7};
  kernels::Tensor part = kernels::Tensor::full(5, 5, -99.0f);
  glorot_uniform_rows(part, 9, {rows.data(), 5}, 17, 3);
  const std::vector<float> got = part.to_vector();
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < 5; ++j) CHECK(got[i * 5 + j] == all[static_cast<std::size_t>(rows[i]) * 5 + j]);
  const std::vector<std::int64_t> bad{9};
  kernels::Tensor one = kernels::Tensor::zeros(1, 5);
  CHECK_THROWS_WITH(glorot_uniform_rows(one, 9, {bad.data(), 1}, 17, 3), Catch::Contains("row id 9 outside [0, 9)"));
}
