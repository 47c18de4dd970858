// Tests of train/layers/activation.*: ReLU against max(x, 0), and dropout's mask: its rate, its scaling,
// backward reusing it, and its independence of row order given global vertex ids.
#include "train/layers/activation.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/reference/naive_layers.hpp"
#include "tests/train/gradient_check.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::Dense;

namespace {

Step training_step(std::uint64_t seed, std::uint64_t epoch) {
  Step s;
  s.seed = seed;
  s.epoch = epoch;
  return s;
}

}  // namespace

TEST_CASE("Activation relu zeroes negative entries and their gradients", "[train]") {
  RandomStream rng(test::case_seed(1), 0);
  Dense x = test::random_dense(rng, 20, 3);
  Activation relu;
  Step step;
  const kernels::Tensor y = relu.forward(test::to_tensor(x), step);
  CHECK(test::max_relative_error(test::to_dense(y), test::relu(x)) == 0.0);
  Dense g = test::random_dense(rng, 20, 3);
  const Dense gx = test::to_dense(relu.backward(test::to_tensor(g)));
  for (std::size_t i = 0; i < x.v.size(); ++i) CHECK(gx.v[i] == (x.v[i] > 0 ? g.v[i] : 0.0));
  CHECK_THROWS_AS(relu.backward(test::to_tensor(g)), InvalidArgument);
}

TEST_CASE("Activation elu is exp(x) - 1 below zero, with the derivative exp(x) from its output", "[train]") {
  RandomStream rng(test::case_seed(2), 0);
  Dense x = test::random_dense(rng, 20, 3);
  Activation elu(ActivationKind::elu);
  const kernels::Tensor y = elu.forward(test::to_tensor(x), Step{});
  Dense g = test::random_dense(rng, 20, 3);
  const Dense gx = test::to_dense(elu.backward(test::to_tensor(g)));
  const Dense out = test::to_dense(y);
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    CHECK(out.v[i] == Approx(x.v[i] > 0 ? x.v[i] : std::expm1(x.v[i])).margin(1e-6));
    CHECK(gx.v[i] == Approx(x.v[i] > 0 ? g.v[i] : g.v[i] * std::exp(x.v[i])).margin(1e-6));
  }
}

TEST_CASE("Dropout drops about p of the entries, scales the rest by 1/(1-p) and reuses the mask", "[train]") {
  const float p = GENERATE(0.1f, 0.5f, 0.8f);
  const std::uint64_t seed = test::case_seed(static_cast<std::uint64_t>(p * 100));
  CAPTURE(p, seed);
  const std::int64_t rows = 400, cols = 25;
  RandomStream rng(seed, 0);
  Dense x = test::random_dense(rng, rows, cols);
  for (double& v : x.v) v += v >= 0 ? 0.5 : -0.5;  // no zeros, so a zero output means dropped
  const Dropout dropout(p, 2);
  const Step step = training_step(seed, 3);
  REQUIRE(dropout.active(step));
  const Dense y = test::to_dense(dropout.forward(test::to_tensor(x), step));
  Dense ones(rows, cols, 1.0);
  const Dense g = test::to_dense(dropout.backward(test::to_tensor(ones), step));
  std::int64_t dropped = 0;
  const double scale = 1.0 / (1.0 - static_cast<double>(p));
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    if (y.v[i] == 0.0) {
      ++dropped;
      CHECK(g.v[i] == 0.0);
    } else {
      CHECK(y.v[i] == Approx(x.v[i] * scale).epsilon(1e-6));
      CHECK(g.v[i] == Approx(scale).epsilon(1e-6));
    }
  }
  // 10 000 Bernoulli(p) draws: 5 standard deviations is at most 250.
  CHECK(std::abs(static_cast<double>(dropped) - static_cast<double>(p) * rows * cols) < 250.0);
}

TEST_CASE("Dropout's mask follows global vertex ids, the epoch and the layer", "[train]") {
  const std::uint64_t seed = test::case_seed(4);
  const std::int64_t rows = 50, cols = 8;
  Dense x(rows, cols, 1.0);
  const Dropout layer0(0.5f, 0), layer1(0.5f, 1);
  const Dense base = test::to_dense(layer0.forward(test::to_tensor(x), training_step(seed, 1)));

  // The same vertices in reverse order, named by their global ids, get the same mask rows.
  std::vector<std::int64_t> reversed(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) reversed[static_cast<std::size_t>(i)] = rows - 1 - i;
  Step permuted = training_step(seed, 1);
  permuted.global_ids = {reversed.data(), rows};
  const Dense y = test::to_dense(layer0.forward(test::to_tensor(x), permuted));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) CHECK(y.at(i, j) == base.at(rows - 1 - i, j));

  const auto differs = [&](const Dense& other) { return test::max_relative_error(other, base) > 0.0; };
  CHECK(differs(test::to_dense(layer0.forward(test::to_tensor(x), training_step(seed, 2)))));
  CHECK(differs(test::to_dense(layer1.forward(test::to_tensor(x), training_step(seed, 1)))));
  CHECK(differs(test::to_dense(layer0.forward(test::to_tensor(x), training_step(seed + 1, 1)))));

  Step short_ids = training_step(seed, 1);
  short_ids.global_ids = {reversed.data(), rows - 1};
  CHECK_THROWS_AS(layer0.forward(test::to_tensor(x), short_ids), InvalidArgument);
}

TEST_CASE("Dropout is the identity in evaluation and with p = 0, and refuses p outside 0 <= p < 1", "[train]") {
  RandomStream rng(test::case_seed(5), 0);
  Dense x = test::random_dense(rng, 6, 4);
  Step eval;
  eval.training = false;
  const Dropout half(0.5f, 0);
  CHECK_FALSE(half.active(eval));
  CHECK(test::max_relative_error(test::to_dense(half.forward(test::to_tensor(x), eval)), x) == 0.0);
  CHECK(test::max_relative_error(test::to_dense(half.backward(test::to_tensor(x), eval)), x) == 0.0);
  const Dropout none(0.0f, 0);
  Step train;
  CHECK_FALSE(none.active(train));
  CHECK(test::max_relative_error(test::to_dense(none.forward(test::to_tensor(x), train)), x) == 0.0);
  CHECK_THROWS_AS(Dropout(1.0f, 0), InvalidArgument);
  CHECK_THROWS_AS(Dropout(-0.1f, 0), InvalidArgument);
}
