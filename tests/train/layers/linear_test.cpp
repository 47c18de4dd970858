// Tests of train/layers/linear.*: forward against a float64 x · W + b, backward against central finite
// differences, and the accumulation of parameter gradients.
#include "train/layers/linear.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "tests/reference/naive_layers.hpp"
#include "tests/train/gradient_check.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::Dense;

TEST_CASE("Linear matches x·W + b and its finite-difference gradients", "[train]") {
  const std::int64_t in = GENERATE(1, 5);
  const std::int64_t out = GENERATE(1, 4);
  const bool bias = GENERATE(true, false);
  const std::uint64_t seed = test::case_seed(static_cast<std::uint64_t>(in * 100 + out * 2 + (bias ? 1 : 0)));
  CAPTURE(in, out, bias, seed);
  Linear layer(in, out, bias, "lin");
  RandomStream rng(seed, 1);
  Dense x = test::random_dense(rng, 9, in);
  std::vector<Dense> params{test::random_dense(rng, in, out)};
  if (bias) params.push_back(test::random_dense(rng, 1, out));
  const auto reference = [&] { return test::naive_linear(x, params[0], bias ? &params[1] : nullptr); };
  const test::GradientErrors e = test::check_layer_gradients(layer, x, params, reference, rng);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 1e-3);
  CHECK(layer.saved_bytes(1000) == 0);
}

TEST_CASE("Linear adds up the gradients of two backward passes", "[train]") {
  Linear layer(2, 1, true, "lin");
  layer.weight().value.copy_from(kernels::Tensor::from_vector(2, 1, {1.0f, -1.0f}).view());
  const kernels::Tensor x = kernels::Tensor::from_vector(2, 2, {1.0f, 2.0f, 3.0f, 4.0f});
  Step step;
  for (int pass = 0; pass < 2; ++pass) {
    CHECK(layer.forward(x, step).to_vector() == std::vector<float>{-1.0f, -1.0f});
    CHECK(layer.backward(kernels::Tensor::from_vector(2, 1, {1.0f, 2.0f}), step).to_vector() ==
          std::vector<float>{1.0f, -1.0f, 2.0f, -2.0f});
  }
  // xᵀ · g = (1·1 + 3·2, 2·1 + 4·2) = (7, 10) per pass; Σ g = 3 per pass.
  CHECK(layer.weight().grad.to_vector() == std::vector<float>{14.0f, 20.0f});
  CHECK(layer.bias()->grad.to_vector() == std::vector<float>{6.0f});
  CHECK(layer.parameters()[0]->name == "lin.weight");
  CHECK(layer.parameters()[1]->name == "lin.bias");
  CHECK_THROWS_AS(layer.backward(kernels::Tensor::zeros(2, 1), step), InvalidArgument);
  CHECK_THROWS_AS(layer.forward(kernels::Tensor::zeros(2, 3), step), InvalidArgument);
}
