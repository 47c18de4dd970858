// Tests of train/layers/hgt_conv.*: forward against a float64 HGT that loops over every vertex,
// head, relation and raw edge explicitly (PyG's HGTConv: typed k, q, v; per-relation, per-head
// key and message matrices and prior; one softmax over a destination's edges of every relation;
// GELU, the output linear and the sigmoid skip gate), and every gradient against central finite
// differences of it, on a small ogbn-mag-like graph with repeated edges, empty rows and an empty
// type, for every type or some types as outputs and both index widths, and on a part whose inputs
// include halo rows; the layer's refusals.
#include "train/layers/hgt_conv.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/hetero_graph.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/train/gradient_check.hpp"
#include "tests/train/layers/hetero_test_graphs.hpp"
#include "train/layers/rgcn_graph.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::Dense;

namespace {

double gelu(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }

// What the reference reads of a graph: per type its output and input rows (a part's inputs add
// halo rows after its outputs), per relation its source and destination types and its CSR
// (destination outputs x source inputs).
struct Relations {
  std::vector<std::int64_t> outputs, inputs;
  std::vector<int> src, dst;
  std::vector<const graph::CsrGraph*> csr;

  static Relations of(const graph::HeteroGraph& g) {
    Relations r;
    for (int t = 0; t < g.num_vertex_types(); ++t) {
      r.outputs.push_back(g.vertex_count(t));
      r.inputs.push_back(g.vertex_count(t));
    }
    for (int k = 0; k < g.num_relations(); ++k) {
      r.src.push_back(g.vertex_type(g.relation_type(k).src));
      r.dst.push_back(g.vertex_type(g.relation_type(k).dst));
      r.csr.push_back(&g.relation(k));
    }
    return r;
  }
};

// Where each type's rows start in a stacking of `rows` rows per type.
std::vector<std::int64_t> offsets(const std::vector<std::int64_t>& rows) {
  std::vector<std::int64_t> out{0};
  for (std::int64_t n : rows) out.push_back(out.back() + n);
  return out;
}

// HGT by its formula, in double, over the raw relations; x stacked by the types' inputs and the
// output by their outputs, type t reading its first in_dims[t] columns; params in HgtConv's order.
Dense naive_hgt(const Relations& g, const std::vector<std::int64_t>& in_dims, const Dense& x,
                const std::vector<Dense>& params, std::int64_t f, std::int64_t heads, std::vector<int> outputs) {
  const auto types = static_cast<int>(g.outputs.size());
  const auto relations = static_cast<int>(g.csr.size());
  if (outputs.empty())
    for (int t = 0; t < types; ++t) outputs.push_back(t);
  const auto computes = [&](int t) { return std::find(outputs.begin(), outputs.end(), t) != outputs.end(); };
  std::vector<char> reads(static_cast<std::size_t>(types), 0);
  std::vector<int> computed;
  for (int t = 0; t < types; ++t) reads[static_cast<std::size_t>(t)] = computes(t) ? 1 : 0;
  for (int r = 0; r < relations; ++r)
    if (computes(g.dst[static_cast<std::size_t>(r)])) {
      computed.push_back(r);
      reads[static_cast<std::size_t>(g.src[static_cast<std::size_t>(r)])] = 1;
    }
  const std::vector<std::int64_t> in_rows = offsets(g.inputs), out_rows = offsets(g.outputs);
  const std::int64_t d = f / heads;
  std::size_t next = 0;
  std::vector<Dense> kqv(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    if (!reads[static_cast<std::size_t>(t)]) continue;
    const auto ts = static_cast<std::size_t>(t);
    Dense xt(g.inputs[ts], in_dims[ts]);
    for (std::int64_t i = 0; i < xt.rows; ++i)
      for (std::int64_t c = 0; c < xt.cols; ++c) xt.at(i, c) = x.at(in_rows[ts] + i, c);
    kqv[ts] = test::add_row(test::matmul(xt, params[next]), params[next + 1]);
    next += 2;
  }
  std::vector<const Dense*> a_rel(static_cast<std::size_t>(relations)), m_rel(a_rel.size()), prior(a_rel.size());
  for (int r : computed) {
    a_rel[static_cast<std::size_t>(r)] = &params[next++];
    m_rel[static_cast<std::size_t>(r)] = &params[next++];
    prior[static_cast<std::size_t>(r)] = &params[next++];
  }
  Dense y(out_rows.back(), f);
  for (int t = 0; t < types; ++t) {
    if (!computes(t)) continue;
    const auto ts = static_cast<std::size_t>(t);
    Dense agg(g.outputs[ts], f);
    for (std::int64_t i = 0; i < agg.rows; ++i)
      for (std::int64_t h = 0; h < heads; ++h) {
        // Every entry of row i in every relation into t: its score and its message.
        std::vector<double> scores;
        std::vector<std::vector<double>> messages;
        for (int r : computed) {
          const auto rs = static_cast<std::size_t>(r);
          if (g.dst[rs] != t) continue;
          const auto s = static_cast<std::size_t>(g.src[rs]);
          const graph::CsrGraph& rel = *g.csr[rs];
          for (std::int64_t e = rel.indptr()[i]; e < rel.indptr()[i + 1]; ++e) {
            const std::int64_t j = rel.index_type() == graph::IndexType::i32 ? rel.indices<std::int32_t>()[e]
                                                                              : rel.indices<std::int64_t>()[e];
            double score = 0;
            std::vector<double> message(static_cast<std::size_t>(d), 0.0);
            for (std::int64_t c = 0; c < d; ++c) {
              double key = 0, value = 0;
              for (std::int64_t k = 0; k < d; ++k) {
                key += kqv[s].at(j, h * d + k) * a_rel[rs]->at(h * d + k, c);
                value += kqv[s].at(j, 2 * f + h * d + k) * m_rel[rs]->at(h * d + k, c);
              }
              score += kqv[ts].at(i, f + h * d + c) * key;
              message[static_cast<std::size_t>(c)] = value;
            }
            scores.push_back(score * prior[rs]->at(0, h) / std::sqrt(static_cast<double>(d)));
            messages.push_back(message);
          }
        }
        if (scores.empty()) continue;
        const double m = *std::max_element(scores.begin(), scores.end());
        double sum = 0;
        for (double e : scores) sum += std::exp(e - m);
        for (std::size_t e = 0; e < scores.size(); ++e)
          for (std::int64_t c = 0; c < d; ++c)
            agg.at(i, h * d + c) += std::exp(scores[e] - m) / sum * messages[e][static_cast<std::size_t>(c)];
      }
    for (double& v : agg.v) v = gelu(v);
    Dense out = test::add_row(test::matmul(agg, params[next]), params[next + 1]);
    next += 2;
    if (in_dims[ts] == f) {
      const double a = 1.0 / (1.0 + std::exp(-params[next++].at(0, 0)));
      for (std::int64_t i = 0; i < out.rows; ++i)
        for (std::int64_t c = 0; c < f; ++c) out.at(i, c) = a * out.at(i, c) + (1 - a) * x.at(in_rows[ts] + i, c);
    }
    for (std::int64_t i = 0; i < out.rows; ++i)
      for (std::int64_t c = 0; c < f; ++c) y.at(out_rows[ts] + i, c) = out.at(i, c);
  }
  return y;
}

}  // namespace

TEST_CASE("HgtConv matches an explicit float64 HGT and its finite-difference gradients", "[train]") {
  const std::int64_t heads = GENERATE(1, 2);
  const graph::IndexType type = GENERATE(graph::IndexType::i32, graph::IndexType::i64);
  // Every type, or papers and fields only (authors and venues then read but not computed).
  const std::vector<int> outputs = GENERATE(std::vector<int>{}, std::vector<int>{2, 0});
  const std::int64_t f = 4;
  // Papers as wide as the output (their skip gate on), the others not.
  const std::vector<std::int64_t> in_dims{f, 3, 5, 2};
  const std::uint64_t seed = test::case_seed(static_cast<std::uint64_t>(
      heads * 8 + (type == graph::IndexType::i64 ? 4 : 0) + static_cast<std::int64_t>(outputs.size())));
  CAPTURE(heads, seed, outputs);
  const graph::HeteroGraph g = test::random_mag(seed);
  const RgcnGraph rg(g, type);
  HgtConv conv(rg, in_dims, f, {heads, outputs}, "conv0");
  test::StackedHetero<HgtConv> layer(conv, test::type_rows(g), in_dims, f);
  RandomStream rng(seed, 1);
  Dense x = test::random_dense(rng, test::type_rows(g).back(), 6);
  std::vector<Dense> params;
  for (Parameter* p : conv.parameters())
    params.push_back(test::random_dense(rng, p->value.rows(), p->value.cols(), 0.8));
  const Relations relations = Relations::of(g);
  const auto reference = [&] { return naive_hgt(relations, in_dims, x, params, f, heads, outputs); };
  const test::GradientErrors e = test::check_layer_gradients(layer, x, params, reference, rng);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 2e-3);
}

TEST_CASE("HgtConv on a part computes the first input rows of each type from all of them", "[train]") {
  // Two types with halo rows (inputs beyond the outputs): paper 4 of 7 rows, author 3 of 5; papers
  // as wide as the output (the skip gate reads their first rows).
  const std::uint64_t seed = test::case_seed(95);
  RandomStream rng(seed, 0);
  const std::vector<std::int64_t> in_dims{4, 3};
  const graph::CsrGraph writes = test::random_relation(rng, 4, 5, 9);
  const graph::CsrGraph cites = test::random_relation(rng, 4, 7, 8);
  const graph::CsrGraph rev_writes = test::random_relation(rng, 3, 7, 9);
  const RgcnGraph rg({"paper", "author"}, {4, 3}, {7, 5},
                     {{{"author", "writes", "paper"}, 1, 0, &writes},
                      {{"paper", "cites", "paper"}, 0, 0, &cites},
                      {{"paper", "rev_writes", "author"}, 0, 1, &rev_writes}});
  HgtConv conv(rg, in_dims, 4, {2, {}}, "conv0");
  test::StackedHetero<HgtConv> layer(conv, {0, 7, 12}, {0, 4, 7}, in_dims, 4);
  Dense x = test::random_dense(rng, 12, 4);
  std::vector<Dense> params;
  for (Parameter* p : conv.parameters())
    params.push_back(test::random_dense(rng, p->value.rows(), p->value.cols(), 0.8));
  const Relations relations{{4, 3}, {7, 5}, {1, 0, 0}, {0, 0, 1}, {&writes, &cites, &rev_writes}};
  const auto reference = [&] { return naive_hgt(relations, in_dims, x, params, 4, 2, {}); };
  const test::GradientErrors e = test::check_layer_gradients(layer, x, params, reference, rng);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 2e-3);
}

TEST_CASE("HgtConv refuses widths that do not fit, a backward without forward and a wrong input", "[train]") {
  const graph::HeteroGraph g = test::random_mag(5);
  const RgcnGraph rg(g);
  CHECK_THROWS_WITH(HgtConv(rg, {4, 3, 5}, 4, {1, {}}, "c"), Catch::Contains("one input width per vertex type"));
  CHECK_THROWS_WITH(HgtConv(rg, {4, 3, 5, 2}, 5, {2, {}}, "c"), Catch::Contains("multiple of the heads"));
  CHECK_THROWS_WITH(HgtConv(rg, {4, 3, 5, 2}, 4, {2, {7}}, "c"), Catch::Contains("out of range"));
  HgtConv conv(rg, {4, 3, 5, 2}, 4, {2, {}}, "c");
  CHECK_THROWS_WITH(conv.backward({}, Step{}), Catch::Contains("backward needs a training forward"));
  const std::vector<kernels::Tensor> x = [&] {
    std::vector<kernels::Tensor> v;
    for (int t = 0; t < g.num_vertex_types(); ++t) v.push_back(kernels::Tensor::zeros(g.vertex_count(t), 3));
    return v;
  }();
  std::vector<kernels::ConstTensorView> views;
  for (const kernels::Tensor& t : x) views.push_back(t.view());
  CHECK_THROWS_WITH(conv.forward(views, Step{}), Catch::Contains("input of paper is 6 x 3, expected 6 x 4"));
}
