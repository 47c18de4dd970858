// Tests of train/layers/sage_conv.*: forward against a float64 dense (D^-1 A · x) · W_l + x · W_r + b,
// backward against central finite differences, on random directed and symmetric graphs.
#include "train/layers/sage_conv.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "graph/build.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/train/gradient_check.hpp"
#include "train/layers/aggregation.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::Dense;

namespace {

// The mean over each row's entries by its definition, from the raw graph: 1 / deg on every
// neighbour (repeated neighbours count as often as they appear), an empty row all zero.
Dense naive_mean_matrix(const graph::CsrGraph& g) {
  Dense m = test::dense_matrix(g);
  for (std::int64_t i = 0; i < m.rows; ++i) {
    double degree = 0.0;
    for (std::int64_t j = 0; j < m.cols; ++j) degree += m.at(i, j);
    for (std::int64_t j = 0; j < m.cols; ++j) m.at(i, j) = degree > 0 ? m.at(i, j) / degree : 0.0;
  }
  return m;
}

}  // namespace

TEST_CASE("SageConv matches mean(x_N(i))·W_l + x_i·W_r + b and its finite-difference gradients", "[train]") {
  const bool symmetric = GENERATE(false, true);
  const auto dims = GENERATE(std::pair<std::int64_t, std::int64_t>{7, 3}, std::pair<std::int64_t, std::int64_t>{3, 7},
                             std::pair<std::int64_t, std::int64_t>{4, 4});
  const bool bias = GENERATE(true, false);
  const bool input_grad = GENERATE(true, false);
  const std::uint64_t seed = test::case_seed(static_cast<std::uint64_t>(dims.first * 100 + dims.second) * 8 +
                                             (symmetric ? 4 : 0) + (bias ? 2 : 0) + (input_grad ? 1 : 0));
  CAPTURE(symmetric, dims.first, dims.second, bias, input_grad, seed);
  const std::int64_t n = 13;
  // Sparse enough that a directed graph leaves some rows empty (their mean is 0).
  const graph::CsrGraph g = test::random_graph(seed, n, 24, symmetric);
  const Dense mean = naive_mean_matrix(g);
  LocalAggregation aggregation(graph::mean_normalize(g));

  SageConv conv(aggregation, dims.first, dims.second, bias, "conv1");
  conv.set_input_grad(input_grad);
  CHECK(conv.aggregates_first() == (dims.second > dims.first));
  RandomStream rng(seed, 1);
  Dense x = test::random_dense(rng, n, dims.first);
  std::vector<Dense> params{test::random_dense(rng, dims.first, dims.second, 0.5),
                            test::random_dense(rng, dims.first, dims.second, 0.5)};
  if (bias) params.push_back(test::random_dense(rng, 1, dims.second));
  const auto reference = [&] {
    return test::naive_sage(mean, x, params[0], params[1], bias ? &params[2] : nullptr);
  };

  const test::GradientErrors e = test::check_layer_gradients(conv, x, params, reference, rng);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 1e-3);
}

TEST_CASE("SageConv tells the neighbour weight from the root weight on a hand-drawn graph", "[train]") {
  //  1 -> 0, 2 -> 0 (vertex 0 averages 1 and 2); vertices 1 and 2 have no in-edges.
  const std::vector<std::int64_t> src{1, 2}, dst{0, 0};
  const graph::CsrGraph g = graph::csr_from_coo<std::int64_t>(3, 3, dst.data(), src.data(), nullptr, 2);
  LocalAggregation aggregation(graph::mean_normalize(g));
  SageConv conv(aggregation, 1, 1, true, "conv0");
  conv.weight().value.fill(10.0f);      // W_l
  conv.root_weight().value.fill(1.0f);  // W_r
  conv.bias()->value.fill(0.5f);
  const kernels::Tensor x = kernels::Tensor::from_vector(3, 1, {1.0f, 2.0f, 4.0f});
  Step step;
  // y_0 = mean(2, 4) · 10 + 1 · 1 + 0.5 = 31.5; y_1 = 2.5; y_2 = 4.5.
  CHECK(conv.forward(x, step).to_vector() == std::vector<float>{31.5f, 2.5f, 4.5f});
  // d loss / d x for loss = y_0: x_0 through W_r, x_1 and x_2 through the mean.
  CHECK(conv.backward(kernels::Tensor::from_vector(3, 1, {1.0f, 0.0f, 0.0f}), step).to_vector() ==
        std::vector<float>{1.0f, 5.0f, 5.0f});
  CHECK(conv.weight().grad.to_vector() == std::vector<float>{3.0f});
  CHECK(conv.root_weight().grad.to_vector() == std::vector<float>{1.0f});
  CHECK(conv.bias()->grad.to_vector() == std::vector<float>{1.0f});
}

TEST_CASE("SageConv names its parameters and rejects misuse", "[train]") {
  LocalAggregation aggregation(graph::mean_normalize(test::random_graph(3, 6, 10, false)));
  SageConv conv(aggregation, 4, 3, true, "conv1");
  REQUIRE(conv.parameters().size() == 3);
  CHECK(conv.parameters()[0]->name == "conv1.weight");
  CHECK(conv.parameters()[1]->name == "conv1.root_weight");
  CHECK(conv.parameters()[2]->name == "conv1.bias");
  CHECK(SageConv(aggregation, 4, 3, false, "conv1").parameters().size() == 2);
  Step step;
  CHECK_THROWS_AS(conv.backward(kernels::Tensor::zeros(6, 3), step), InvalidArgument);
  CHECK_THROWS_WITH(conv.forward(kernels::Tensor::zeros(6, 2), step), Catch::Contains("conv1"));
  const kernels::Tensor x = kernels::Tensor::full(6, 4, 1.0f);
  const kernels::Tensor y = conv.forward(x, step);
  CHECK_THROWS_AS(conv.backward(kernels::Tensor::zeros(6, 4), step), InvalidArgument);
}
