// Tests of train/layers/rgat_conv.*: forward against a float64 relational GAT that loops over every
// relation, destination, head and raw edge explicitly (PyG's HeteroConv of GATConv per relation,
// summed), and every gradient against central finite differences of it, on a small ogbn-mag-like
// graph with repeated edges, empty rows and an empty type, heads concatenated or averaged, for
// every type or some types as outputs, and on a part whose inputs include halo rows; training rows
// against the whole layer; the refusals.
#include "train/layers/rgat_conv.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/reference/naive_hgt.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/reference/naive_rgat.hpp"
#include "tests/train/gradient_check.hpp"
#include "tests/train/layers/hetero_test_graphs.hpp"
#include "tests/train/layers/training_rows_check.hpp"
#include "train/layers/rgcn_graph.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::attention_keep;
using halo::test::Dense;
using halo::test::Keep;
using halo::test::naive_rgat;
using halo::test::Relations;

TEST_CASE("RgatConv matches an explicit float64 relational GAT and its finite-difference gradients", "[train]") {
  const std::int64_t heads = GENERATE(1, 2);
  const bool concat = GENERATE(true, false);
  const float p = GENERATE(0.0f, 0.4f);
  const std::vector<int> outputs = GENERATE(std::vector<int>{}, std::vector<int>{2, 0});
  const std::int64_t f = 3;
  const std::vector<std::int64_t> in_dims{4, 3, 5, 2};
  const std::uint64_t seed =
      test::case_seed(static_cast<std::uint64_t>(heads * 16 + (concat ? 8 : 0) + (p > 0 ? 4 : 0)) + outputs.size());
  CAPTURE(heads, concat, p, outputs, seed);
  const graph::HeteroGraph g = test::random_mag(seed);
  const RgcnGraph rg(g);
  RgatConvOptions options;
  options.heads = heads;
  options.concat = concat;
  options.outputs = outputs;
  options.attention_dropout = p;
  options.layer = 3;
  RgatConv conv(rg, RgatConvLayout(rg, in_dims, f, options, "conv0"), "conv0");
  const Relations relations = Relations::of(g);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(test::type_rows(g).back()));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i);
  std::vector<kernels::IndexView> type_ids;
  for (int t = 0; t < g.num_vertex_types(); ++t)
    type_ids.push_back({ids.data() + test::type_rows(g)[static_cast<std::size_t>(t)], g.vertex_count(t)});
  conv.set_vertex_ids(type_ids);
  const std::int64_t width = concat ? heads * f : f;
  test::StackedHetero<RgatConv> layer(conv, test::type_rows(g), in_dims, width);
  RandomStream rng(seed, 1);
  Dense x = test::random_dense(rng, test::type_rows(g).back(), 6);
  std::vector<Dense> params;
  for (Parameter* param : conv.parameters())
    params.push_back(test::random_dense(rng, param->value.rows(), param->value.cols(), 0.8));
  const Keep keep = attention_keep(relations, p, 3);
  const auto reference = [&] {
    return naive_rgat(relations, in_dims, x, params, f, heads, concat, 0.2, outputs, keep);
  };
  // A destination's score cancels in its softmax when all its entries' scores have one sign: then
  // the gradient of lin_dst and att_dst is exactly zero, and rounding noise is held to 1e-3 of 0.1.
  const test::GradientErrors e = test::check_layer_gradients(layer, x, params, reference, rng, 0.1);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 2e-3);
}

TEST_CASE("RgatConv on a part computes the first input rows of each type from all of them", "[train]") {
  const std::uint64_t seed = test::case_seed(97);
  RandomStream rng(seed, 0);
  const std::vector<std::int64_t> in_dims{4, 3};
  const test::TwoTypePart part(rng);
  const RgcnGraph& rg = part.graph;
  RgatConvOptions options;
  options.heads = 2;
  RgatConv conv(rg, RgatConvLayout(rg, in_dims, 2, options, "conv0"), "conv0");
  test::StackedHetero<RgatConv> layer(conv, {0, 7, 12}, {0, 4, 7}, in_dims, 4);
  Dense x = test::random_dense(rng, 12, 4);
  std::vector<Dense> params;
  for (Parameter* p : conv.parameters())
    params.push_back(test::random_dense(rng, p->value.rows(), p->value.cols(), 0.8));
  const Relations relations{{4, 3}, {7, 5}, {1, 0, 0}, {0, 0, 1}, {&part.writes, &part.cites, &part.rev_writes}};
  const auto reference = [&] {
    return naive_rgat(relations, in_dims, x, params, 2, 2, true, 0.2, {}, attention_keep(relations, 0.0f, 0));
  };
  const test::GradientErrors e = test::check_layer_gradients(layer, x, params, reference, rng, 0.1);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 2e-3);
}

TEST_CASE("RgatConv with training rows returns those rows of the whole layer and takes their gradient", "[train]") {
  const std::uint64_t seed = test::case_seed(98);
  const graph::HeteroGraph g = test::random_mag(seed);
  const RgcnGraph rg(g);
  const std::vector<std::int64_t> in_dims{4, 3, 5, 2};
  RgatConvOptions options;
  options.heads = 2;
  const RgatConvLayout layout(rg, in_dims, 3, options, "conv0");
  RgatConv whole(rg, layout, "conv0"), selected(rg, layout, "conv0");
  RandomStream rng(seed, 1);
  test::check_training_rows(whole, selected, rg, in_dims, 0, {4, 1, 5}, rng);
}

TEST_CASE("RgatConv names and initialises its parameters and refuses what does not fit", "[train]") {
  const graph::HeteroGraph g = test::random_mag(5);
  const RgcnGraph rg(g);
  RgatConvOptions options;
  options.heads = 2;
  options.outputs = {2};  // fields: has_topic from papers
  RgatConv conv(rg, RgatConvLayout(rg, {4, 3, 5, 2}, 3, options, "c"), "c");
  conv.initialize(3, 0, 0.25f);
  std::vector<std::string> names;
  for (const Parameter* p : conv.parameters()) names.push_back(p->name);
  CHECK(names == std::vector<std::string>{"c.paper__has_topic__field.lin_src.weight",
                                          "c.paper__has_topic__field.lin_dst.weight",
                                          "c.paper__has_topic__field.att_src", "c.paper__has_topic__field.att_dst",
                                          "c.paper__has_topic__field.bias"});
  const std::vector<Parameter*> ps = conv.parameters();
  CHECK(ps[0]->value.rows() == 4);
  CHECK(ps[1]->value.rows() == 5);
  CHECK(ps[0]->weight_decay == 0.25f);
  CHECK(ps[2]->weight_decay == 0.0f);
  for (float v : ps[4]->value.to_vector()) CHECK(v == 0.0f);
  CHECK(conv.reads(0));
  CHECK(conv.reads(2));
  CHECK_FALSE(conv.reads(1));

  CHECK_THROWS_WITH(RgatConvLayout(rg, {4, 3, 5}, 3, options, "c"), Catch::Contains("one input width per vertex"));
  CHECK_THROWS_WITH(RgatConvLayout(rg, {4, 3, 5, 2}, 0, options, "c"), Catch::Contains("positive widths"));
  CHECK_THROWS_WITH(RgatConvLayout(rg, {0, 3, 5, 2}, 3, options, "c"), Catch::Contains("input width 0"));
  CHECK_THROWS_WITH(conv.backward({}, Step{}), Catch::Contains("backward needs a training forward"));
  const std::vector<std::int64_t> row{0};
  CHECK_THROWS_WITH(conv.set_training_rows(0, {row.data(), 1}), Catch::Contains("not one of its outputs"));
}
