// Tests of train/layers/rgcn_conv.* (and train/layers/detail/rgcn_panels.*, its transform-first layout):
// forward against a float64 per-relation loop over the raw relations, every parameter and input
// gradient against central finite differences (both orders, all or some output types, with and
// without bases, different input widths per type, both index widths, a part's halo rows), bases
// against the explicit W_r, a hand-drawn graph, per-type input gradients, the choice of order,
// training rows, a streamed input type, names, memory and misuse.
#include "train/layers/rgcn_conv.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/build.hpp"
#include "kernels/tensor.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/train/gradient_check.hpp"
#include "tests/train/layers/hetero_test_graphs.hpp"
#include "train/features/feature_pipeline.hpp"
#include "train/features/feature_source.hpp"
#include "train/layers/layer.hpp"
#include "train/layers/layer_input.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::csr;
using halo::test::Dense;
using halo::test::random_mag;
using halo::test::random_relation;
using halo::test::type_rows;
using kernels::ConstTensorView;
using kernels::Tensor;

namespace {

// The mean over each row's entries, from the raw relation: count / degree (repeated entries
// count as often as they appear), an empty row all zero.
Dense naive_mean_matrix(const graph::CsrGraph& rel) {
  Dense m = test::dense_matrix(rel);
  for (std::int64_t i = 0; i < m.rows; ++i) {
    double degree = 0.0;
    for (std::int64_t j = 0; j < m.cols; ++j) degree += m.at(i, j);
    for (std::int64_t j = 0; j < m.cols; ++j) m.at(i, j) = degree > 0 ? m.at(i, j) / degree : 0.0;
  }
  return m;
}

// Rows [first, first + rows) and columns [0, cols) of d.
Dense block(const Dense& d, std::int64_t first, std::int64_t rows, std::int64_t cols) {
  Dense out(rows, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) out.at(i, j) = d.at(first + i, j);
  return out;
}

// R-GCN by its formula, in double, relation by relation over the raw relations: for every type t
// in `outputs` (every type when empty), y_t = x_t · W_root,t + b_t + Σ_{r into t} M_r · x_src(r) · W_r,
// stacked type after type, the rows of other types zero. x is stacked the same way, type t
// reading its first in_dims[t] columns. params as RgcnConv lists them: the W_r of the relations
// into outputs (or the bases V and comp a, W_r = Σ_b a_rb V_b, a row of comp per such relation),
// the outputs' roots, their biases.
Dense naive_rgcn(const graph::HeteroGraph& g, const std::vector<std::int64_t>& in_dims, const Dense& x,
                 const std::vector<Dense>& params, int num_bases, bool bias, std::vector<int> outputs = {}) {
  const int types = g.num_vertex_types();
  if (outputs.empty())
    for (int t = 0; t < types; ++t) outputs.push_back(t);
  const auto is_output = [&](int t) { return std::find(outputs.begin(), outputs.end(), t) != outputs.end(); };
  std::vector<int> computed;
  for (int r = 0; r < g.num_relations(); ++r)
    if (is_output(g.vertex_type(g.relation_type(r).dst))) computed.push_back(r);
  const std::vector<std::int64_t> rows = type_rows(g);
  const std::int64_t out_dim = params.back().cols;
  std::vector<Dense> w(static_cast<std::size_t>(g.num_relations()));
  std::size_t next = 0;
  if (num_bases == 0) {
    for (int r : computed) w[static_cast<std::size_t>(r)] = params[next++];
  } else {
    const Dense& bases = params[next++];
    const Dense& comp = params[next++];
    const std::int64_t in = bases.rows / num_bases;
    for (std::size_t slot = 0; slot < computed.size(); ++slot) {
      Dense wr(in, out_dim);
      for (int b = 0; b < num_bases; ++b)
        for (std::int64_t i = 0; i < in; ++i)
          for (std::int64_t j = 0; j < out_dim; ++j)
            wr.at(i, j) += comp.at(static_cast<std::int64_t>(slot), b) * bases.at(b * in + i, j);
      w[static_cast<std::size_t>(computed[slot])] = wr;
    }
  }
  std::size_t root = next;
  std::size_t bias_param = next + outputs.size();
  Dense y(rows.back(), out_dim);
  for (int t = 0; t < types; ++t) {
    if (!is_output(t)) continue;
    const auto ts = static_cast<std::size_t>(t);
    Dense yt = test::matmul(block(x, rows[ts], g.vertex_count(t), in_dims[ts]), params[root++]);
    if (bias) yt = test::add_row(std::move(yt), params[bias_param++]);
    for (int r : computed) {
      if (g.vertex_type(g.relation_type(r).dst) != t) continue;
      const auto s = static_cast<std::size_t>(g.vertex_type(g.relation_type(r).src));
      const Dense xs = block(x, rows[s], rows[s + 1] - rows[s], in_dims[s]);
      yt = test::add(std::move(yt),
                     test::matmul(test::matmul(naive_mean_matrix(g.relation(r)), xs), w[static_cast<std::size_t>(r)]));
    }
    for (std::int64_t i = 0; i < yt.rows; ++i)
      for (std::int64_t j = 0; j < out_dim; ++j) y.at(rows[ts] + i, j) = yt.at(i, j);
  }
  return y;
}

// Random values for every parameter of `conv`, in its order (scaled down for the weights).
std::vector<Dense> random_parameters(RgcnConv& conv, RandomStream& rng) {
  std::vector<Dense> params;
  for (Parameter* p : conv.parameters())
    params.push_back(test::random_dense(rng, p->value.rows(), p->value.cols(), 0.5));
  return params;
}

// Random values for the parameters of a (random_parameters), given to b as well (a layer of the
// same shape).
std::vector<Dense> same_random_parameters(RgcnConv& a, RgcnConv& b, RandomStream& rng) {
  std::vector<Dense> params = random_parameters(a, rng);
  for (std::size_t k = 0; k < params.size(); ++k) {
    a.parameters()[k]->value.copy_from(test::to_tensor(params[k]).view());
    b.parameters()[k]->value.copy_from(test::to_tensor(params[k]).view());
  }
  return params;
}

std::vector<ConstTensorView> views_of(const std::vector<Tensor>& x) {
  std::vector<ConstTensorView> views;
  for (const Tensor& t : x) views.push_back(t.view());
  return views;
}

// One random input per vertex type of g, in_dims[t] columns wide.
std::vector<Tensor> random_inputs(const graph::HeteroGraph& g, const std::vector<std::int64_t>& in_dims,
                                  RandomStream& rng) {
  std::vector<Tensor> x;
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    Dense xt = test::random_dense(rng, g.vertex_count(t), in_dims[static_cast<std::size_t>(t)]);
    x.push_back(test::to_tensor(xt));
  }
  return x;
}

}  // namespace

TEST_CASE("RgcnConv matches the per-relation mean sum and its finite-difference gradients", "[train]") {
  const int num_bases = GENERATE(0, 2);
  const bool bias = GENERATE(true, false);
  const std::int64_t out_dim = GENERATE(3, 6);
  const graph::IndexType type = GENERATE(graph::IndexType::i32, graph::IndexType::i64);
  const RgcnOrder order = GENERATE(RgcnOrder::transform_first, RgcnOrder::aggregate_first);
  // Every type, or papers and fields only (authors and venues then read but not computed).
  const std::vector<int> outputs = GENERATE(std::vector<int>{}, std::vector<int>{2, 0});
  // Bases need one input width; without them, every type reads its own.
  const std::vector<std::int64_t> in_dims =
      num_bases > 0 ? std::vector<std::int64_t>{4, 4, 4, 4} : std::vector<std::int64_t>{5, 3, 4, 2};
  const std::uint64_t seed =
      test::case_seed(static_cast<std::uint64_t>(num_bases * 100 + out_dim) * 16 + (bias ? 8 : 0) +
                      (type == graph::IndexType::i64 ? 4 : 0) + (order == RgcnOrder::aggregate_first ? 2 : 0) +
                      outputs.size() / 2);
  CAPTURE(num_bases, bias, out_dim, seed, static_cast<int>(order), outputs);
  const graph::HeteroGraph g = random_mag(seed);
  const RgcnGraph rg(g, type);
  RgcnConv conv(rg, in_dims, out_dim, num_bases, bias, "conv0", kernels::Device::cpu(), {outputs, order, {}});
  for (int t : outputs) CHECK(conv.order(t) == order);
  test::StackedHetero<RgcnConv> layer(conv, type_rows(g), in_dims, out_dim);
  RandomStream rng(seed, 1);
  // Stacked inputs one column wider than the widest type, so every view is strided.
  Dense x = test::random_dense(rng, type_rows(g).back(), 6);
  std::vector<Dense> params = random_parameters(conv, rng);
  const auto reference = [&] { return naive_rgcn(g, in_dims, x, params, num_bases, bias, outputs); };

  const test::GradientErrors e = test::check_layer_gradients(layer, x, params, reference, rng);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 1e-3);
}

TEST_CASE("RgcnConv with bases computes what the explicit W_r = Σ_b a_rb V_b computes", "[train]") {
  const std::uint64_t seed = test::case_seed(77);
  const graph::HeteroGraph g = random_mag(seed);
  const RgcnGraph rg(g);
  const std::vector<std::int64_t> in_dims{4, 4, 4, 4};
  RgcnConv with_bases(rg, in_dims, 5, 3, true, "conv0");
  RgcnConv explicit_weights(rg, in_dims, 5, 0, true, "conv0");
  RandomStream rng(seed, 1);
  Dense bases = test::random_dense(rng, 3 * 4, 5);
  Dense comp = test::random_dense(rng, g.num_relations(), 3);
  with_bases.bases()->value.copy_from(test::to_tensor(bases).view());
  with_bases.comp()->value.copy_from(test::to_tensor(comp).view());
  for (int r = 0; r < g.num_relations(); ++r) {
    Dense wr(4, 5);
    for (int b = 0; b < 3; ++b)
      for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t j = 0; j < 5; ++j) wr.at(i, j) += comp.at(r, b) * bases.at(b * 4 + i, j);
    explicit_weights.relation_weight(r)->value.copy_from(test::to_tensor(wr).view());
  }
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    Dense root = test::random_dense(rng, 4, 5);
    Dense b = test::random_dense(rng, 1, 5);
    with_bases.root(t).value.copy_from(test::to_tensor(root).view());
    explicit_weights.root(t).value.copy_from(test::to_tensor(root).view());
    with_bases.bias(t)->value.copy_from(test::to_tensor(b).view());
    explicit_weights.bias(t)->value.copy_from(test::to_tensor(b).view());
  }
  std::vector<Tensor> x;
  std::vector<ConstTensorView> views;
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    Dense xt = test::random_dense(rng, g.vertex_count(t), 4);
    x.push_back(test::to_tensor(xt));
  }
  for (const Tensor& t : x) views.push_back(t.view());
  Step step;
  const std::vector<Tensor> y_bases = with_bases.forward(views, step);
  const std::vector<Tensor> y_explicit = explicit_weights.forward(views, step);
  std::vector<Tensor> up_bases, up_explicit;
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    Dense up = test::random_dense(rng, g.vertex_count(t), 5);
    up_bases.push_back(test::to_tensor(up));
    up_explicit.push_back(test::to_tensor(up));
  }
  const std::vector<Tensor> gx_bases = with_bases.backward(std::move(up_bases), step);
  const std::vector<Tensor> gx_explicit = explicit_weights.backward(std::move(up_explicit), step);
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    CAPTURE(t);
    const auto ts = static_cast<std::size_t>(t);
    CHECK(test::max_relative_error(test::to_dense(y_bases[ts]), test::to_dense(y_explicit[ts])) < 1e-5);
    CHECK(test::max_relative_error(test::to_dense(gx_bases[ts]), test::to_dense(gx_explicit[ts])) < 1e-5);
    CHECK(test::max_relative_error(test::to_dense(with_bases.root(t).grad),
                                   test::to_dense(explicit_weights.root(t).grad)) < 1e-5);
  }
}

TEST_CASE("RgcnConv averages each relation separately on a hand-drawn graph", "[train]") {
  //  user (2) -buys-> item (3): u0 -> i0, u1 -> i0, u1 -> i1;  item -rev_buys-> user: the reverse.
  graph::HeteroGraph g;
  g.add_vertex_type("user", 2);
  g.add_vertex_type("item", 3);
  g.add_relation({"user", "buys", "item"}, csr(3, 2, {0, 0, 1}, {0, 1, 1}));
  g.add_reverse_relations();
  const RgcnGraph rg(g);
  RgcnConv conv(rg, {1, 1}, 1, 0, true, "conv0");
  conv.relation_weight(0)->value.fill(10.0f);   // buys
  conv.relation_weight(1)->value.fill(100.0f);  // rev_buys
  conv.root(0).value.fill(1.0f);
  conv.root(1).value.fill(1.0f);
  conv.bias(0)->value.fill(0.5f);
  conv.bias(1)->value.fill(0.5f);
  const Tensor users = Tensor::from_vector(2, 1, {1.0f, 2.0f});
  const Tensor items = Tensor::from_vector(3, 1, {4.0f, 8.0f, 16.0f});
  Step step;
  const std::vector<Tensor> y = conv.forward({users.view(), items.view()}, step);
  // u0 = 1 + 0.5 + 100 · mean(i0) = 401.5; u1 = 2 + 0.5 + 100 · mean(i0, i1) = 602.5;
  // i0 = 4 + 0.5 + 10 · mean(u0, u1) = 19.5; i1 = 8 + 0.5 + 10 · u1 = 28.5; i2 = 16.5 (no buyer).
  CHECK(y[0].to_vector() == std::vector<float>{401.5f, 602.5f});
  CHECK(y[1].to_vector() == std::vector<float>{19.5f, 28.5f, 16.5f});
  // loss = y(i0): u0 and u1 each through half of W_buys, i0 through its root.
  std::vector<Tensor> up;
  up.push_back(Tensor::zeros(2, 1));
  up.push_back(Tensor::from_vector(3, 1, {1.0f, 0.0f, 0.0f}));
  const std::vector<Tensor> gx = conv.backward(std::move(up), step);
  CHECK(gx[0].to_vector() == std::vector<float>{5.0f, 5.0f});
  CHECK(gx[1].to_vector() == std::vector<float>{1.0f, 0.0f, 0.0f});
  CHECK(conv.relation_weight(0)->grad.to_vector() == std::vector<float>{1.5f});
  CHECK(conv.relation_weight(1)->grad.to_vector() == std::vector<float>{0.0f});
  CHECK(conv.root(1).grad.to_vector() == std::vector<float>{4.0f});
  CHECK(conv.root(0).grad.to_vector() == std::vector<float>{0.0f});
  CHECK(conv.bias(1)->grad.to_vector() == std::vector<float>{1.0f});
  CHECK(conv.bias(0)->grad.to_vector() == std::vector<float>{0.0f});
}

TEST_CASE("RgcnConv returns no input gradient for types switched off and the same gradients otherwise", "[train]") {
  const std::uint64_t seed = test::case_seed(78);
  const graph::HeteroGraph g = random_mag(seed);
  const RgcnGraph rg(g);
  const std::vector<std::int64_t> in_dims{5, 3, 4, 2};
  RgcnConv all(rg, in_dims, 3, 0, true, "conv0");
  RgcnConv some(rg, in_dims, 3, 0, true, "conv0");
  some.set_input_grad(0, false);
  some.set_input_grad(2, false);
  CHECK_FALSE(some.input_grad(0));
  CHECK(some.input_grad(1));
  RandomStream rng(seed, 1);
  const std::vector<Dense> params = same_random_parameters(all, some, rng);
  const std::vector<Tensor> x = random_inputs(g, in_dims, rng);
  const std::vector<ConstTensorView> views = views_of(x);
  Step step;
  all.forward(views, step);
  some.forward(views, step);
  std::vector<Tensor> up_all, up_some;
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    Dense up = test::random_dense(rng, g.vertex_count(t), 3);
    up_all.push_back(test::to_tensor(up));
    up_some.push_back(test::to_tensor(up));
  }
  const std::vector<Tensor> gx_all = all.backward(std::move(up_all), step);
  const std::vector<Tensor> gx_some = some.backward(std::move(up_some), step);
  CHECK(gx_some[0].empty());
  CHECK(gx_some[2].empty());
  CHECK(gx_some[1].to_vector() == gx_all[1].to_vector());
  CHECK(gx_some[3].rows() == 0);
  for (std::size_t k = 0; k < params.size(); ++k)
    CHECK(some.parameters()[k]->grad.to_vector() == all.parameters()[k]->grad.to_vector());
}

TEST_CASE("RgcnConv names its parameters per relation and type and rejects misuse", "[train]") {
  const graph::HeteroGraph g = random_mag(5);
  const RgcnGraph rg(g);
  RgcnConv conv(rg, {5, 3, 4, 2}, 6, 0, true, "conv1", kernels::Device::cpu(), {{}, RgcnOrder::transform_first, {}});
  const std::vector<Parameter*> ps = conv.parameters();
  REQUIRE(ps.size() == 7 + 4 + 4);
  CHECK(ps[0]->name == "conv1.weight.author__writes__paper");
  CHECK(ps[0]->value.rows() == 3);
  CHECK(ps[0]->value.cols() == 6);
  CHECK(ps[6]->name == "conv1.weight.field__listed_by__venue");
  CHECK(ps[7]->name == "conv1.root.paper");
  CHECK(ps[8]->value.rows() == 3);
  CHECK(ps[14]->name == "conv1.bias.venue");
  CHECK(conv.bases() == nullptr);
  for (int t = 0; t < 4; ++t) CHECK(conv.order(t) == RgcnOrder::transform_first);
  // Panels by source type: author (writes, root: 2 bands of input width 3), paper (cites,
  // has_topic, rev_writes, root: 4 x 5), field (rev_has_topic, listed_by, root: 3 x 4), venue
  // (publishes, root: 2 x 2). Kept: the panels' weights. Backward: H's gradient (7·2 + 6·4 + 3·3
  // + 0·2 rows) with the stacked output gradients (6 + 7 + 3 + 0 rows), then with the panels'
  // weight gradients and the input gradients.
  const std::int64_t panel_weights = (3 * 2 + 5 * 4 + 4 * 3 + 2 * 2) * 6;
  CHECK(conv.saved_bytes() == panel_weights * 4);
  CHECK(conv.backward_bytes(0) == ((14 + 24 + 9 + 0) * 6 + panel_weights) * 4);
  CHECK(conv.backward_bytes(1000) == ((14 + 24 + 9 + 0) * 6 + panel_weights) * 4 + 1000);

  RgcnConv with_bases(rg, {4, 4, 4, 4}, 6, 2, false, "conv2");
  const std::vector<Parameter*> pb = with_bases.parameters();
  REQUIRE(pb.size() == 2 + 4);
  CHECK(pb[0]->name == "conv2.bases");
  CHECK(pb[0]->value.rows() == 8);
  CHECK(pb[1]->name == "conv2.comp");
  CHECK(pb[1]->value.rows() == 7);
  CHECK(pb[1]->value.cols() == 2);
  CHECK(with_bases.relation_weight(0) == nullptr);
  CHECK(with_bases.bias(0) == nullptr);
  // The composed W_r; for every type computed aggregate-first its stack [A_r ... | x_t] and
  // stacked weights, (blocks + 1) bands of width 4; for every source type its panel's weights,
  // a band per relation into a transform-first type and one for its own root if transform-first.
  std::int64_t kept = 7 * 4 * 6;
  for (int t = 0; t < 4; ++t) {
    const bool aggregate = with_bases.order(t) == RgcnOrder::aggregate_first;
    if (aggregate) kept += (rg.num_outputs(t) + 6) * 4 * (rg.stack(t).num_blocks() + 1);
    std::int64_t bands = aggregate ? 0 : 1;
    for (int r = 0; r < 7; ++r)
      if (rg.relation_src(r) == t && with_bases.order(rg.relation_dst(r)) == RgcnOrder::transform_first) ++bands;
    kept += 4 * bands * 6;
  }
  CHECK(with_bases.saved_bytes() == kept * 4);

  CHECK_THROWS_WITH(RgcnConv(rg, {4, 3, 4, 4}, 6, 2, false, "conv2"),
                    Catch::Contains("relation author__writes__paper reads 3"));
  CHECK_THROWS_WITH(RgcnConv(rg, {4, 4, 4}, 6, 0, false, "conv2"), Catch::Contains("one input width per vertex type"));
  CHECK_THROWS_AS(RgcnConv(rg, {4, 4, 4, 4}, 0, 0, false, "conv2"), InvalidArgument);
  CHECK_THROWS_AS(RgcnConv(rg, {4, 4, 4, 4}, 6, -1, false, "conv2"), InvalidArgument);

  Step step;
  const Tensor paper = Tensor::zeros(6, 5), author = Tensor::zeros(7, 3), field = Tensor::zeros(3, 4),
               venue = Tensor::zeros(0, 2), wrong = Tensor::zeros(7, 4);
  CHECK_THROWS_WITH(conv.forward({paper.view(), author.view(), field.view()}, step),
                    Catch::Contains("expected one input per vertex type (4), got 3"));
  CHECK_THROWS_WITH(conv.forward({paper.view(), wrong.view(), field.view(), venue.view()}, step),
                    Catch::Contains("input of type author is 7 x 4, expected 7 x 3"));
  std::vector<Tensor> grads;
  for (std::int64_t n : {6, 7, 3, 0}) grads.push_back(Tensor::zeros(n, 6));
  CHECK_THROWS_WITH(conv.backward(std::move(grads), step), Catch::Contains("training forward"));
  step.training = false;
  const std::vector<Tensor> y = conv.forward({paper.view(), author.view(), field.view(), venue.view()}, step);
  CHECK(y.size() == 4);
  CHECK(y[3].rows() == 0);
  std::vector<Tensor> again;
  for (std::int64_t n : {6, 7, 3, 0}) again.push_back(Tensor::zeros(n, 6));
  CHECK_THROWS_AS(conv.backward(std::move(again), step), InvalidArgument);
  CHECK_THROWS_AS(conv.set_input_grad(4, false), InvalidArgument);
}

TEST_CASE("RgcnConv picks per type the order with less work", "[train]") {
  //  user (2) -buys-> item (3): u0 -> i0, u1 -> i0, u1 -> i1;  item -similar-> item: i2 -> i0.
  //  Items: buys (2 source rows, 3 entries) and similar (3 source rows, 1 entry).
  graph::HeteroGraph g;
  g.add_vertex_type("user", 2);
  g.add_vertex_type("item", 3);
  g.add_relation({"user", "buys", "item"}, csr(3, 2, {0, 0, 1}, {0, 1, 1}));
  g.add_relation({"item", "similar", "item"}, csr(3, 3, {0}, {2}));
  const RgcnGraph rg(g);
  const std::vector<std::int64_t> in_dims{2, 2};
  const double s = RgcnConv::spmm_cost_ratio;
  // Transform first: (2 + 3) source rows · 2 · out, then 4 entries · out in the SpMM.
  // Aggregate first: 2 relations · 3 items · 2 · out, then (3 + 1) entries · 2 in the SpMMs.
  for (const std::int64_t out : {1, 5}) {
    CAPTURE(out);
    const double transform = 5.0 * 2 * out + s * 4 * out;
    const double aggregate = 2.0 * 3 * 2 * out + s * 4 * 2;
    CHECK(RgcnConv::order_cost(rg, in_dims, out, 1, RgcnOrder::transform_first) == Approx(transform));
    CHECK(RgcnConv::order_cost(rg, in_dims, out, 1, RgcnOrder::aggregate_first) == Approx(aggregate));
    const RgcnConv conv(rg, in_dims, out, 0, true, "conv0");
    CHECK(conv.order(1) == (aggregate < transform ? RgcnOrder::aggregate_first : RgcnOrder::transform_first));
  }
  // A narrow output is cheaper transformed first, a wide one aggregated first.
  CHECK(RgcnConv(rg, in_dims, 1, 0, true, "conv0").order(1) == RgcnOrder::transform_first);
  CHECK(RgcnConv(rg, in_dims, 5, 0, true, "conv0").order(1) == RgcnOrder::aggregate_first);
  // A layer asked for items only has no user root and reads users only through buys.
  RgcnConv items(rg, in_dims, 5, 0, true, "conv0", kernels::Device::cpu(), {{1}, RgcnOrder::automatic, {}});
  CHECK_FALSE(items.computes(0));
  CHECK(items.reads(0));
  CHECK(items.parameters().size() == 2 + 1 + 1);
  CHECK_THROWS_WITH(items.root(0), Catch::Contains("not an output"));
  CHECK_THROWS_WITH(RgcnConv(rg, in_dims, 5, 0, true, "conv0", kernels::Device::cpu(), {{2}, RgcnOrder::automatic, {}}),
                    Catch::Contains("output type 2 is not one of the 2 vertex types"));
}

TEST_CASE("RgcnConvLayout counts the parameters and matrices the RgcnConv built from it holds", "[train]") {
  const std::uint64_t seed = GENERATE(1, 2, 3);
  const RgcnOrder order = GENERATE(RgcnOrder::automatic, RgcnOrder::aggregate_first, RgcnOrder::transform_first);
  const int bases = GENERATE(0, 2);
  const bool bias = GENERATE(false, true);
  CAPTURE(seed, static_cast<int>(order), bases, bias);
  const graph::HeteroGraph g = random_mag(test::case_seed(seed));
  const RgcnGraph rg(g);
  const std::vector<std::int64_t> in_dims = bases > 0 ? std::vector<std::int64_t>{4, 4, 4, 4}
                                                      : std::vector<std::int64_t>{5, 3, 4, 2};
  for (const std::vector<int>& outputs : {std::vector<int>{}, std::vector<int>{0}, std::vector<int>{0, 2}}) {
    CAPTURE(outputs.size());
    const RgcnConvOptions options{outputs, order, {}};
    const RgcnConvLayout layout(rg, in_dims, 6, bases, bias, options, "conv0");
    RgcnConv conv(rg, in_dims, 6, bases, bias, "conv0", kernels::Device::cpu(), options);
    std::int64_t values = 0;
    for (const Parameter* p : conv.parameters()) values += p->value.numel();
    CHECK(layout.parameter_bytes(rg) == values * 4);
    // The sparse matrices as built: blocks, their transposes, the renumbered stacks and theirs.
    CHECK(layout.graph_bytes(rg) == conv.graph_bytes());
    // Training on every third row of an output type, last first: an aggregate-first type keeps
    // those rows' blocks and their transposes in place of its blocks' transposes.
    const int selected = outputs.empty() ? 0 : outputs.back();
    std::vector<std::int64_t> rows;
    for (std::int64_t i = rg.num_outputs(selected) - 1; i >= 0; i -= 3) rows.push_back(i);
    const kernels::IndexView picked{rows.data(), static_cast<std::int64_t>(rows.size())};
    const std::int64_t before = conv.graph_bytes();
    conv.set_training_rows(selected, picked);
    CHECK(layout.graph_bytes(rg, selected, picked) == conv.graph_bytes());
    CHECK((conv.graph_bytes() != before) == (conv.order(selected) == RgcnOrder::aggregate_first));
    const std::vector<std::int64_t> outside{rg.num_outputs(selected)};
    if (conv.order(selected) == RgcnOrder::aggregate_first)
      CHECK_THROWS_WITH(layout.graph_bytes(rg, selected, {outside.data(), 1}), Catch::Contains("is not one of"));
    for (int t = 0; t < 4; ++t) {
      CHECK((layout.computes[static_cast<std::size_t>(t)] != 0) == conv.computes(t));
      if (conv.computes(t))
        CHECK((layout.aggregate[static_cast<std::size_t>(t)] != 0) == (conv.order(t) == RgcnOrder::aggregate_first));
    }
  }
}

TEST_CASE("RgcnConv on a part computes the first input rows of each type from all of them", "[train]") {
  // Two types with halo rows (inputs beyond the outputs): paper 4 of 7 rows, author 3 of 5.
  // Relations: author -writes-> paper (4 x 5), paper -cites-> paper (4 x 7), paper -rev_writes->
  // author (3 x 7), random with repeated entries and empty rows.
  const RgcnOrder order = GENERATE(RgcnOrder::transform_first, RgcnOrder::aggregate_first);
  CAPTURE(static_cast<int>(order));
  const std::uint64_t seed = test::case_seed(order == RgcnOrder::aggregate_first ? 91 : 90);
  RandomStream rng(seed, 0);
  const std::vector<std::int64_t> outputs{4, 3}, inputs{7, 5}, in_dims{3, 2};
  const graph::CsrGraph writes = random_relation(rng, 4, 5, 9);
  const graph::CsrGraph cites = random_relation(rng, 4, 7, 8);
  const graph::CsrGraph rev_writes = random_relation(rng, 3, 7, 9);
  const RgcnGraph rg({"paper", "author"}, outputs, inputs,
                     {{{"author", "writes", "paper"}, 1, 0, &writes},
                      {{"paper", "cites", "paper"}, 0, 0, &cites},
                      {{"paper", "rev_writes", "author"}, 0, 1, &rev_writes}});
  CHECK(rg.num_outputs(1) == 3);
  CHECK(rg.num_inputs(1) == 5);
  CHECK(rg.relation_rows(0) == 5);
  const std::int64_t out_dim = 4;
  RgcnConv conv(rg, in_dims, out_dim, 0, true, "conv0", kernels::Device::cpu(), {{}, order, {}});
  const std::vector<std::int64_t> in_rows{0, 7, 12}, out_rows{0, 4, 7};
  test::StackedHetero<RgcnConv> layer(conv, in_rows, out_rows, in_dims, out_dim);
  Dense x = test::random_dense(rng, 12, 3);
  std::vector<Dense> params = random_parameters(conv, rng);
  // params: W_writes, W_cites, W_rev_writes, root paper, root author, bias paper, bias author.
  const auto reference = [&] {
    const Dense paper = block(x, 0, 7, 3), author = block(x, 7, 5, 2);
    Dense yp = test::add_row(test::matmul(block(paper, 0, 4, 3), params[3]), params[5]);
    yp = test::add(std::move(yp), test::matmul(test::matmul(naive_mean_matrix(writes), author), params[0]));
    yp = test::add(std::move(yp), test::matmul(test::matmul(naive_mean_matrix(cites), paper), params[1]));
    Dense ya = test::add_row(test::matmul(block(author, 0, 3, 2), params[4]), params[6]);
    ya = test::add(std::move(ya), test::matmul(test::matmul(naive_mean_matrix(rev_writes), paper), params[2]));
    Dense y(7, out_dim);
    for (std::int64_t j = 0; j < out_dim; ++j) {
      for (std::int64_t i = 0; i < 4; ++i) y.at(i, j) = yp.at(i, j);
      for (std::int64_t i = 0; i < 3; ++i) y.at(4 + i, j) = ya.at(i, j);
    }
    return y;
  };
  const test::GradientErrors e = test::check_layer_gradients(layer, x, params, reference, rng);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 1e-3);
  CHECK_THROWS_WITH(RgcnGraph({"paper", "author"}, outputs, inputs, {{{"author", "writes", "paper"}, 0, 0, &writes}}),
                    Catch::Contains("relation author__writes__paper is 4 x 5, expected 4 x 7"));
}

TEST_CASE("RgcnConv with training rows computes those rows and the gradients of a loss that reads them alone",
          "[train]") {
  const RgcnOrder order = GENERATE(RgcnOrder::transform_first, RgcnOrder::aggregate_first);
  const std::uint64_t seed = test::case_seed(order == RgcnOrder::aggregate_first ? 91 : 90);
  CAPTURE(static_cast<int>(order), seed);
  const graph::HeteroGraph g = random_mag(seed);
  const RgcnGraph rg(g);
  const std::vector<std::int64_t> in_dims{5, 3, 4, 2};
  const std::int64_t out_dim = 3;
  RgcnConv all(rg, in_dims, out_dim, 0, true, "conv0", kernels::Device::cpu(), {{}, order, {}});
  RgcnConv some(rg, in_dims, out_dim, 0, true, "conv0", kernels::Device::cpu(), {{}, order, {}});
  // Papers (type 0) in a scrambled order, one field (type 2); the authors keep all their rows.
  const std::vector<std::vector<std::int64_t>> rows{{4, 1, 5, 0}, {}, {2}, {}};
  some.set_training_rows(0, {rows[0].data(), 4});
  some.set_training_rows(2, {rows[2].data(), 1});
  CHECK(some.training_rows(0) == 4);
  CHECK(some.training_rows(1) == 7);
  CHECK(some.training_rows(2) == 1);
  RandomStream rng(seed, 1);
  const std::vector<Dense> params = same_random_parameters(all, some, rng);
  const std::vector<Tensor> x = random_inputs(g, in_dims, rng);
  const std::vector<ConstTensorView> views = views_of(x);
  const auto selected = [&](int t) { return t == 0 || t == 2; };

  // An evaluation forward computes every row, as without a selection.
  Step eval;
  eval.training = false;
  const std::vector<Tensor> y_eval = some.forward(views, eval);
  const std::vector<Tensor> y_all = all.forward(views, Step{});
  for (int t = 0; t < g.num_vertex_types(); ++t)
    CHECK(test::max_relative_error(test::to_dense(y_eval[static_cast<std::size_t>(t)]),
                                   test::to_dense(y_all[static_cast<std::size_t>(t)])) < 1e-6);

  // A training forward computes the selected rows only, in their order.
  const std::vector<Tensor> y_some = some.forward(views, Step{});
  std::vector<Tensor> up_all, up_some;
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    const auto ts = static_cast<std::size_t>(t);
    const Dense full = test::to_dense(y_all[ts]);
    Dense up = test::random_dense(rng, some.training_rows(t), out_dim);
    Dense up_full(g.vertex_count(t), out_dim);  // zero outside the selection: the loss does not read those rows
    if (!selected(t)) up_full = up;
    Dense expected(some.training_rows(t), out_dim);
    for (std::int64_t k = 0; k < some.training_rows(t); ++k) {
      const std::int64_t row = selected(t) ? rows[ts][static_cast<std::size_t>(k)] : k;
      for (std::int64_t j = 0; j < out_dim; ++j) {
        expected.at(k, j) = full.at(row, j);
        if (selected(t)) up_full.at(row, j) = up.at(k, j);
      }
    }
    CAPTURE(t);
    CHECK(test::max_relative_error(test::to_dense(y_some[ts]), expected) < 1e-6);
    up_some.push_back(test::to_tensor(up));
    up_all.push_back(test::to_tensor(up_full));
  }
  const std::vector<Tensor> gx_all = all.backward(std::move(up_all), Step{});
  const std::vector<Tensor> gx_some = some.backward(std::move(up_some), Step{});
  for (std::size_t t = 0; t < gx_all.size(); ++t) {
    CAPTURE(t);
    CHECK(test::max_relative_error(test::to_dense(gx_some[t]), test::to_dense(gx_all[t])) < 1e-6);
  }
  test::check_parameter_grads_close(some.parameters(), all.parameters(), 1e-6);

  // Misuse: a row outside the type's outputs, a row twice, a type the layer does not compute, a
  // gradient of every row after a forward of the selected ones.
  const std::vector<std::int64_t> outside{6}, twice{1, 1}, one{0};
  CHECK_THROWS_AS(some.set_training_rows(0, {outside.data(), 1}), InvalidArgument);
  CHECK_THROWS_AS(some.set_training_rows(0, {twice.data(), 2}), InvalidArgument);
  RgcnConv papers_only(rg, in_dims, out_dim, 0, true, "conv1", kernels::Device::cpu(), {{0}, order, {}});
  CHECK_THROWS_AS(papers_only.set_training_rows(1, {one.data(), 1}), InvalidArgument);
  some.forward(views, Step{});
  std::vector<Tensor> wrong;
  for (int t = 0; t < g.num_vertex_types(); ++t) wrong.push_back(Tensor::zeros(g.vertex_count(t), out_dim));
  CHECK_THROWS_AS(some.backward(std::move(wrong), Step{}), InvalidArgument);
}

TEST_CASE("RgcnConv with a streamed input type computes what the resident input gives, in row chunks", "[train]") {
  const std::uint64_t seed = test::case_seed(92);
  CAPTURE(seed);
  const graph::HeteroGraph g = random_mag(seed);
  const RgcnGraph rg(g);
  const std::vector<std::int64_t> in_dims{5, 3, 4, 2};
  const std::int64_t out_dim = 3;
  // Aggregating first is asked of every type; the papers (which read the authors) and the authors
  // (their own root) transform first instead, the fields keep it.
  RgcnConv resident(rg, in_dims, out_dim, 0, true, "conv0", kernels::Device::cpu(),
                    {{}, RgcnOrder::aggregate_first, {}});
  RgcnConv streaming(rg, in_dims, out_dim, 0, true, "conv0", kernels::Device::cpu(),
                     {{}, RgcnOrder::aggregate_first, {1}});
  CHECK(streaming.streamed(1));
  CHECK(streaming.order(0) == RgcnOrder::transform_first);
  CHECK(streaming.order(1) == RgcnOrder::transform_first);
  CHECK(streaming.order(2) == RgcnOrder::aggregate_first);
  RandomStream rng(seed, 1);
  const std::vector<Dense> params = same_random_parameters(resident, streaming, rng);
  const std::vector<Tensor> x = random_inputs(g, in_dims, rng);
  // The 7 authors in chunks of 3, 3 and 1 rows.
  Array<float> authors = Array<float>::matrix(x[1].rows(), x[1].cols());
  const std::vector<float> values = x[1].to_vector();
  std::copy(values.begin(), values.end(), authors.data());
  const FeatureSource source = FeatureSource::from_array(std::move(authors));
  FeaturePipelineOptions chunks;
  chunks.chunk_rows = 3;
  chunks.budget_bytes = 2 * 3 * source.row_bytes();
  FeaturePipeline pipeline(source, chunks);
  std::vector<InputMatrix> streamed(4);
  streamed[1] = InputMatrix(pipeline, {});
  std::vector<ConstTensorView> views = views_of(x);
  views[1] = {};  // not read: the author rows come from the pipeline

  const std::vector<Tensor> y_resident = resident.forward(views_of(x), Step{});
  const std::vector<Tensor> y_streaming = streaming.forward(views, Step{}, streamed);
  for (std::size_t t = 0; t < 4; ++t) {
    CAPTURE(t);
    CHECK(test::max_relative_error(test::to_dense(y_streaming[t]), test::to_dense(y_resident[t])) < 1e-5);
  }
  std::vector<Tensor> up_resident, up_streaming;
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    Dense up = test::random_dense(rng, g.vertex_count(t), out_dim);
    up_resident.push_back(test::to_tensor(up));
    up_streaming.push_back(test::to_tensor(up));
  }
  Dense author_grad(7, 3, std::nan(""));
  std::vector<std::int64_t> chunk_starts;
  const auto sink = [&](int type, ConstTensorView rows, std::int64_t first_row) {
    CHECK(type == 1);
    chunk_starts.push_back(first_row);
    for (std::int64_t i = 0; i < rows.rows; ++i)
      for (std::int64_t j = 0; j < rows.cols; ++j) author_grad.at(first_row + i, j) = rows.row(i)[j];
  };
  const std::vector<Tensor> gx_resident = resident.backward(std::move(up_resident), Step{});
  const std::vector<Tensor> gx_streaming = streaming.backward(std::move(up_streaming), Step{}, sink);
  CHECK(chunk_starts == std::vector<std::int64_t>{0, 3, 6});
  CHECK(gx_streaming[1].empty());
  CHECK(test::max_relative_error(author_grad, test::to_dense(gx_resident[1])) < 1e-5);
  for (std::size_t t : {0u, 2u}) {
    CAPTURE(t);
    CHECK(test::max_relative_error(test::to_dense(gx_streaming[t]), test::to_dense(gx_resident[t])) < 1e-5);
  }
  test::check_parameter_grads_close(streaming.parameters(), resident.parameters(), 1e-5);

  // Misuse: no streamed input for a streamed type, or no sink for its gradient.
  CHECK_THROWS_AS(streaming.forward(views, Step{}), InvalidArgument);
  streaming.forward(views, Step{}, streamed);
  std::vector<Tensor> up;
  for (int t = 0; t < g.num_vertex_types(); ++t) up.push_back(Tensor::zeros(g.vertex_count(t), out_dim));
  CHECK_THROWS_AS(streaming.backward(std::move(up), Step{}), InvalidArgument);
}
