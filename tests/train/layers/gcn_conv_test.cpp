// Tests of train/layers/gcn_conv.*: forward against a float64 dense Â · x · W + b, backward against
// central finite differences, on random directed and symmetric graphs, both multiplication orders.
#include "train/layers/gcn_conv.hpp"

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

// Passes everything to a LocalAggregation and records the widths it was asked to carry.
class RecordingAggregation : public Aggregation {
 public:
  explicit RecordingAggregation(graph::CsrGraph a) : inner_(std::move(a)) {}
  std::int64_t num_vertices() const override { return inner_.num_vertices(); }
  kernels::Tensor forward(const kernels::Tensor& x) override {
    forward_widths.push_back(x.cols());
    return inner_.forward(x);
  }
  kernels::Tensor backward(const kernels::Tensor& g) override {
    backward_widths.push_back(g.cols());
    return inner_.backward(g);
  }
  std::vector<std::int64_t> forward_widths;
  std::vector<std::int64_t> backward_widths;

 private:
  LocalAggregation inner_;
};

}  // namespace

TEST_CASE("GcnConv matches Â·x·W + b and its finite-difference gradients", "[train]") {
  const bool symmetric = GENERATE(false, true);
  const auto dims = GENERATE(std::pair<std::int64_t, std::int64_t>{7, 3}, std::pair<std::int64_t, std::int64_t>{3, 7},
                             std::pair<std::int64_t, std::int64_t>{4, 4});
  const bool bias = GENERATE(true, false);
  const graph::IndexType type = GENERATE(graph::IndexType::i32, graph::IndexType::i64);
  const std::uint64_t seed = test::case_seed(static_cast<std::uint64_t>(dims.first * 100 + dims.second) * 8 +
                                             (symmetric ? 4 : 0) + (bias ? 2 : 0) + (type == graph::IndexType::i64));
  CAPTURE(symmetric, dims.first, dims.second, bias, seed);
  const std::int64_t n = 13;
  const graph::CsrGraph g = test::random_graph(seed, n, 30, symmetric, type);
  const Dense a_hat = test::dense_matrix(graph::gcn_normalize(g));
  LocalAggregation aggregation(graph::gcn_normalize(g));
  REQUIRE(aggregation.matrix().properties().symmetric == symmetric);

  GcnConv conv(aggregation, dims.first, dims.second, bias, "conv0");
  CHECK(conv.aggregates_first() == (dims.second > dims.first));
  RandomStream rng(seed, 1);
  Dense x = test::random_dense(rng, n, dims.first);
  std::vector<Dense> params{test::random_dense(rng, dims.first, dims.second, 0.5)};
  if (bias) params.push_back(test::random_dense(rng, 1, dims.second));
  const auto reference = [&] { return test::naive_gcn(a_hat, x, params[0], bias ? &params[1] : nullptr); };

  const test::GradientErrors e = test::check_layer_gradients(conv, x, params, reference, rng);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 1e-3);
}

TEST_CASE("GcnConv carries min(in, out) columns through the aggregation both ways and keeps no Â·x at equal widths",
          "[train]") {
  //  0 -> 1 -> 2 -> 3, and 3 -> 0 (a directed cycle)
  const std::vector<std::int64_t> src{0, 1, 2, 3}, dst{1, 2, 3, 0};
  const graph::CsrGraph g = graph::csr_from_coo<std::int64_t>(4, 4, dst.data(), src.data(), nullptr, 4);
  const auto dims = GENERATE(std::pair<std::int64_t, std::int64_t>{6, 2}, std::pair<std::int64_t, std::int64_t>{2, 6},
                             std::pair<std::int64_t, std::int64_t>{4, 4});
  RecordingAggregation aggregation(graph::gcn_normalize(g));
  GcnConv conv(aggregation, dims.first, dims.second, true, "conv1");
  RandomStream rng(test::case_seed(static_cast<std::uint64_t>(dims.first)), 0);
  Dense x = test::random_dense(rng, 4, dims.first);
  Dense w = test::random_dense(rng, dims.first, dims.second);
  conv.weight().value.copy_from(test::to_tensor(w).view());
  Step step;
  const kernels::Tensor xt = test::to_tensor(x);
  const kernels::Tensor y = conv.forward(xt, step);
  Dense up = test::random_dense(rng, 4, dims.second);
  const kernels::Tensor gx = conv.backward(test::to_tensor(up), step);
  const std::int64_t narrow = std::min(dims.first, dims.second);
  CHECK(aggregation.forward_widths == std::vector<std::int64_t>{narrow});
  CHECK(aggregation.backward_widths == std::vector<std::int64_t>{narrow});
  CHECK(gx.rows() == 4);
  CHECK(gx.cols() == dims.first);
  CHECK(conv.saved_bytes(1000) == (dims.second > dims.first ? 1000 * dims.first * 4 : 0));
}

TEST_CASE("GcnConv without an input gradient returns none and still accumulates the weight gradient", "[train]") {
  const auto dims = GENERATE(std::pair<std::int64_t, std::int64_t>{5, 2}, std::pair<std::int64_t, std::int64_t>{2, 5});
  const std::uint64_t seed = test::case_seed(static_cast<std::uint64_t>(dims.first) + 1000);
  const graph::CsrGraph g = test::random_graph(seed, 9, 20, false);
  const Dense a_hat = test::dense_matrix(graph::gcn_normalize(g));
  RecordingAggregation aggregation(graph::gcn_normalize(g));
  GcnConv conv(aggregation, dims.first, dims.second, true, "conv0");
  conv.set_input_grad(false);
  RandomStream rng(seed, 1);
  Dense x = test::random_dense(rng, 9, dims.first);
  std::vector<Dense> params{test::random_dense(rng, dims.first, dims.second), test::random_dense(rng, 1, dims.second)};
  const auto reference = [&] { return test::naive_gcn(a_hat, x, params[0], &params[1]); };
  const test::GradientErrors e = test::check_layer_gradients(conv, x, params, reference, rng);
  CAPTURE(e.forward, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 1e-3);
  // Aggregating first, the weight gradient needs no SpMM at all.
  CHECK(aggregation.backward_widths.size() == (dims.second > dims.first ? 0u : 1u));
}

TEST_CASE("GcnConv names its parameters and rejects misuse", "[train]") {
  LocalAggregation aggregation(graph::gcn_normalize(test::random_graph(5, 6, 10, true)));
  GcnConv with_bias(aggregation, 4, 3, true, "conv2");
  REQUIRE(with_bias.parameters().size() == 2);
  CHECK(with_bias.parameters()[0]->name == "conv2.weight");
  CHECK(with_bias.parameters()[1]->name == "conv2.bias");
  CHECK(with_bias.parameters()[0]->value.rows() == 4);
  CHECK(with_bias.parameters()[1]->value.cols() == 3);
  GcnConv without_bias(aggregation, 4, 3, false, "conv0");
  CHECK(without_bias.parameters().size() == 1);
  CHECK(without_bias.bias() == nullptr);

  Step step;
  CHECK_THROWS_AS(with_bias.backward(kernels::Tensor::zeros(6, 3), step), InvalidArgument);
  CHECK_THROWS_WITH(with_bias.forward(kernels::Tensor::zeros(6, 5), step), Catch::Contains("conv2"));
  CHECK_THROWS_AS(with_bias.forward(kernels::Tensor::zeros(5, 4), step), InvalidArgument);
  CHECK_THROWS_AS(GcnConv(aggregation, 0, 3, true, "conv0"), InvalidArgument);

  step.training = false;
  const kernels::Tensor y = with_bias.forward(kernels::Tensor::full(6, 4, 1.0f), step);
  CHECK(y.rows() == 6);
  CHECK_THROWS_WITH(with_bias.backward(kernels::Tensor::zeros(6, 3), step), Catch::Contains("training forward"));
}
