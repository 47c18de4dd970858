// Tests of train/layers/hgt_conv.*: forward against a float64 HGT that loops over every vertex,
// head, relation and raw edge explicitly (PyG's HGTConv: typed k, q, v; per-relation, per-head
// key and message matrices and prior; one softmax over a destination's edges of every relation;
// GELU, the output linear and the sigmoid skip gate), and every gradient against central finite
// differences of it, on a small ogbn-mag-like graph with repeated edges, empty rows and an empty
// type, for every type or some types as outputs and both index widths, and on a part whose inputs
// include halo rows; training rows against the whole layer; the layer's refusals.
#include "train/layers/hgt_conv.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/hetero_graph.hpp"
#include "tests/reference/naive_hgt.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/train/gradient_check.hpp"
#include "tests/train/layers/hetero_test_graphs.hpp"
#include "tests/train/layers/training_rows_check.hpp"
#include "train/layers/rgcn_graph.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::Dense;
using halo::test::naive_hgt;
using halo::test::Relations;

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
  const test::TwoTypePart part(rng);
  const RgcnGraph& rg = part.graph;
  HgtConv conv(rg, in_dims, 4, {2, {}}, "conv0");
  test::StackedHetero<HgtConv> layer(conv, {0, 7, 12}, {0, 4, 7}, in_dims, 4);
  Dense x = test::random_dense(rng, 12, 4);
  std::vector<Dense> params;
  for (Parameter* p : conv.parameters())
    params.push_back(test::random_dense(rng, p->value.rows(), p->value.cols(), 0.8));
  const Relations relations{{4, 3}, {7, 5}, {1, 0, 0}, {0, 0, 1}, {&part.writes, &part.cites, &part.rev_writes}};
  const auto reference = [&] { return naive_hgt(relations, in_dims, x, params, 4, 2, {}); };
  const test::GradientErrors e = test::check_layer_gradients(layer, x, params, reference, rng);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 2e-3);
}

TEST_CASE("HgtConv with training rows returns those rows of the whole layer and takes their gradient", "[train]") {
  const std::uint64_t seed = test::case_seed(96);
  const graph::HeteroGraph g = test::random_mag(seed);
  const RgcnGraph rg(g);
  const std::vector<std::int64_t> in_dims{4, 3, 5, 2};
  HgtConv whole(rg, in_dims, 4, {2, {}}, "conv0"), selected(rg, in_dims, 4, {2, {}}, "conv0");
  RandomStream rng(seed, 1);
  test::check_training_rows(whole, selected, rg, in_dims, 0, {4, 1, 5}, rng);
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
  const std::vector<std::int64_t> twice{1, 1}, outside{6};
  CHECK_THROWS_WITH(conv.set_training_rows(0, {twice.data(), 2}), Catch::Contains("listed twice"));
  CHECK_THROWS_WITH(conv.set_training_rows(0, {outside.data(), 1}), Catch::Contains("not one of the 6 outputs"));
  HgtConv fields(rg, {4, 3, 5, 2}, 4, {2, {2}}, "c");
  CHECK_THROWS_WITH(fields.set_training_rows(0, {twice.data(), 1}), Catch::Contains("not one of its outputs"));
}
