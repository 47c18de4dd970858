// Tests of train/layers/gat_conv.* and attention_graph.*: forward against a float64 GAT that
// loops over every vertex's in-neighbours (self loop added) and head explicitly, backward against
// central finite differences of it, concatenated and averaged heads, with and without a bias and a
// residual, with and without attention dropout (its mask is a fixed function of the step, so the layer is a deterministic function
// the differences can follow), on random directed and symmetric graphs; the layer's refusals.
#include "train/layers/gat_conv.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/build.hpp"
#include "kernels/detail/attention_mask.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/train/gradient_check.hpp"
#include "train/layers/attention_graph.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::Dense;

namespace {

struct NaiveGat {
  graph::CsrGraph looped;  // the graph with its self loops, as the layer attends over it
  std::int64_t heads, width;
  bool concat;
  float p;
  kernels::DropoutKey key;
  bool bias, residual;

  double keep(std::int64_t i, std::int64_t j, std::int64_t k) const {
    if (p == 0.0f) return 1.0;
    std::uint32_t bits[4];
    kernels::detail::attention_draws(kernels::detail::attention_key64(key), static_cast<std::uint64_t>(i),
                                     static_cast<std::uint64_t>(j), static_cast<std::uint64_t>(k / 8), bits);
    return kernels::detail::attention_kept(bits, k, kernels::detail::attention_threshold(p))
               ? static_cast<double>(kernels::dropout_scale(p))
               : 0.0;
  }

  // params: W (in x heads · F), a_src, a_dst (heads x F), then bias and W_res when present.
  Dense forward(const Dense& x, const std::vector<Dense>& params) const {
    const Dense h = test::matmul(x, params[0]);
    const std::int64_t n = x.rows;
    const std::int64_t out_cols = concat ? heads * width : width;
    Dense out(n, out_cols);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < heads; ++k) {
        const auto score = [&](const Dense& a, std::int64_t v) {
          double s = 0;
          for (std::int64_t f = 0; f < width; ++f) s += h.at(v, k * width + f) * a.at(k, f);
          return s;
        };
        std::vector<double> e;
        for (std::int64_t at = looped.indptr()[i]; at < looped.indptr()[i + 1]; ++at) {
          const double z = score(params[1], looped.indices<std::int32_t>()[at]) + score(params[2], i);
          e.push_back(z > 0 ? z : 0.2 * z);
        }
        const double m = *std::max_element(e.begin(), e.end());
        double sum = 0;
        for (double v : e) sum += std::exp(v - m);
        for (std::int64_t at = looped.indptr()[i]; at < looped.indptr()[i + 1]; ++at) {
          const std::int64_t j = looped.indices<std::int32_t>()[at];
          const double alpha = std::exp(e[static_cast<std::size_t>(at - looped.indptr()[i])] - m) / sum * keep(i, j, k);
          for (std::int64_t f = 0; f < width; ++f) {
            const double v = alpha * h.at(j, k * width + f);
            if (concat)
              out.at(i, k * width + f) += v;
            else
              out.at(i, f) += v / static_cast<double>(heads);
          }
        }
      }
    if (residual) {
      const Dense res = test::matmul(x, params.back());
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t c = 0; c < out_cols; ++c) out.at(i, c) += res.at(i, c);
    }
    if (bias)
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t c = 0; c < out_cols; ++c) out.at(i, c) += params[3].at(0, c);
    return out;
  }
};

}  // namespace

TEST_CASE("GatConv matches an explicit float64 GAT and its finite-difference gradients", "[train]") {
  const bool symmetric = GENERATE(false, true);
  const bool concat = GENERATE(true, false);
  const float p = GENERATE(0.0f, 0.5f);
  const bool bias = GENERATE(true, false);
  const bool residual = GENERATE(false, true);
  const std::uint64_t seed = test::case_seed((residual ? 16 : 0) + (symmetric ? 8 : 0) + (concat ? 4 : 0) +
                                             (p > 0 ? 2 : 0) + (bias ? 1 : 0) + 300);
  CAPTURE(symmetric, concat, p, bias, residual, seed);
  const std::int64_t n = 11, in = 5, heads = 3, width = 2;
  const graph::CsrGraph g = test::random_graph(seed, n, 22, symmetric);
  LocalAttentionGraph graph(g, kernels::Device::cpu());
  GatConvOptions o;
  o.heads = heads;
  o.out_per_head = width;
  o.concat = concat;
  o.bias = bias;
  o.residual = residual;
  o.attention_dropout = p;
  o.layer = 1;
  GatConv conv(graph, in, o, "conv1");
  // The step check_layer_gradients runs: seed 0, epoch 0, training.
  const NaiveGat naive{graph::with_self_loops(g), heads, width, concat, p, {0, 0, 1}, bias, residual};
  RandomStream rng(seed, 1);
  Dense x = test::random_dense(rng, n, in);
  std::vector<Dense> params{test::random_dense(rng, in, heads * width, 0.5), test::random_dense(rng, heads, width),
                            test::random_dense(rng, heads, width)};
  if (bias) params.push_back(test::random_dense(rng, 1, conv.out_dim()));
  if (residual) params.push_back(test::random_dense(rng, in, conv.out_dim(), 0.5));
  const test::GradientErrors e = test::check_layer_gradients(conv, x, params, [&] { return naive.forward(x, params); }, rng);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 2e-3);
}

TEST_CASE("GatConv refuses a precomputed aggregation, a wrong input and a backward without forward", "[train]") {
  const graph::CsrGraph g = test::random_graph(3, 6, 10, true);
  LocalAttentionGraph graph(g, kernels::Device::cpu());
  GatConvOptions o;
  o.heads = 2;
  o.out_per_head = 3;
  GatConv conv(graph, 4, o, "conv0");
  CHECK(conv.out_dim() == 6);
  CHECK(conv.parameters().size() == 4);
  const kernels::Tensor x = kernels::Tensor::full(6, 4, 0.5f);
  Step step;
  CHECK_THROWS_WITH(conv.forward(LayerInput(InputMatrix(x), InputMatrix(x)), step), Catch::Contains("precomputed"));
  const kernels::Tensor wrong = kernels::Tensor::full(6, 5, 0.5f);
  CHECK_THROWS_WITH(conv.forward(wrong, step), Catch::Contains("input is 6 x 5, expected 6 x 4"));
  CHECK_THROWS_WITH(conv.backward(kernels::Tensor::zeros(6, 6), step), Catch::Contains("training forward"));
  o.attention_dropout = 1.0f;
  CHECK_THROWS_WITH(GatConv(graph, 4, o, "conv0"), Catch::Contains("attention dropout must be in [0, 1)"));
  CHECK_THROWS_AS(LocalAttentionGraph(graph::CsrGraph(2, 3, Array<std::int64_t>::from_vector({0, 0, 0}),
                                                      Array<std::int32_t>{}),
                                      kernels::Device::cpu()),
                  InvalidArgument);
}
