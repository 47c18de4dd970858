// Tests of train/layers/typed_linear.*: forward against y_t = x_t · W_t + b_t in float64 and every
// gradient against central finite differences, for every type or some, with and without bias, on
// a part whose inputs include halo rows (their gradient zero); training rows against the whole
// layer; initialisation and the refusals.
#include "train/layers/typed_linear.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "tests/reference/naive_layers.hpp"
#include "tests/train/gradient_check.hpp"
#include "tests/train/layers/hetero_test_graphs.hpp"
#include "tests/train/layers/training_rows_check.hpp"
#include "train/layers/rgcn_graph.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::Dense;

namespace {

// y stacked by out_rows: type t's rows x_t[0, outputs) · W_t + b_t for the computed types, zero
// for the others; x stacked by in_rows, type t reading its first in_dims[t] columns; params in
// TypedLinear's order.
Dense naive_typed_linear(const Dense& x, const std::vector<std::int64_t>& in_rows,
                         const std::vector<std::int64_t>& out_rows, const std::vector<std::int64_t>& in_dims,
                         const std::vector<int>& computed, bool bias, const std::vector<Dense>& params,
                         std::int64_t out_dim) {
  Dense y(out_rows.back(), out_dim);
  std::size_t next = 0;
  for (int t : computed) {
    const auto ts = static_cast<std::size_t>(t);
    const Dense& w = params[next++];
    const Dense* b = bias ? &params[next++] : nullptr;
    for (std::int64_t i = 0; i < out_rows[ts + 1] - out_rows[ts]; ++i)
      for (std::int64_t c = 0; c < out_dim; ++c) {
        double v = b != nullptr ? b->at(0, c) : 0.0;
        for (std::int64_t k = 0; k < in_dims[ts]; ++k) v += x.at(in_rows[ts] + i, k) * w.at(k, c);
        y.at(out_rows[ts] + i, c) = v;
      }
  }
  return y;
}

}  // namespace

TEST_CASE("TypedLinear matches x_t W_t + b_t in float64 and its finite-difference gradients", "[train]") {
  const bool bias = GENERATE(true, false);
  const std::vector<int> outputs = GENERATE(std::vector<int>{}, std::vector<int>{2, 0});
  const std::uint64_t seed = test::case_seed(static_cast<std::uint64_t>((bias ? 2 : 0) + outputs.size()));
  CAPTURE(bias, outputs, seed);
  const graph::HeteroGraph g = test::random_mag(seed);
  const RgcnGraph rg(g);
  const std::vector<std::int64_t> in_dims{4, 3, 5, 2};
  TypedLinear linear(rg, TypedLinearLayout(rg, in_dims, 3, outputs, bias, "input"), "input");
  const std::vector<std::int64_t> rows = test::type_rows(g);
  test::StackedHetero<TypedLinear> layer(linear, rows, in_dims, 3);
  RandomStream rng(seed, 1);
  Dense x = test::random_dense(rng, rows.back(), 5);
  std::vector<Dense> params;
  for (Parameter* p : linear.parameters()) params.push_back(test::random_dense(rng, p->value.rows(), p->value.cols()));
  const std::vector<int> computed = outputs.empty() ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0, 2};
  const auto reference = [&] { return naive_typed_linear(x, rows, rows, in_dims, computed, bias, params, 3); };
  const test::GradientErrors e = test::check_layer_gradients(layer, x, params, reference, rng);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 1e-4);
}

TEST_CASE("TypedLinear on a part multiplies the owned rows and gives its halo rows no gradient", "[train]") {
  const std::uint64_t seed = test::case_seed(31);
  RandomStream rng(seed, 0);
  const graph::CsrGraph writes = test::random_relation(rng, 4, 5, 9);
  const RgcnGraph rg({"paper", "author"}, {4, 3}, {7, 5}, {{{"author", "writes", "paper"}, 1, 0, &writes}});
  const std::vector<std::int64_t> in_dims{4, 3};
  TypedLinear linear(rg, TypedLinearLayout(rg, in_dims, 2, {}, true, "input"), "input");
  test::StackedHetero<TypedLinear> layer(linear, {0, 7, 12}, {0, 4, 7}, in_dims, 2);
  Dense x = test::random_dense(rng, 12, 4);
  std::vector<Dense> params;
  for (Parameter* p : linear.parameters()) params.push_back(test::random_dense(rng, p->value.rows(), p->value.cols()));
  const auto reference = [&] { return naive_typed_linear(x, {0, 7, 12}, {0, 4, 7}, in_dims, {0, 1}, true, params, 2); };
  const test::GradientErrors e = test::check_layer_gradients(layer, x, params, reference, rng);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 1e-4);
}

TEST_CASE("TypedLinear with training rows returns those rows of the whole layer and takes their gradient", "[train]") {
  const std::uint64_t seed = test::case_seed(32);
  const graph::HeteroGraph g = test::random_mag(seed);
  const RgcnGraph rg(g);
  const std::vector<std::int64_t> in_dims{4, 3, 5, 2};
  const TypedLinearLayout layout(rg, in_dims, 3, {0, 1}, true, "output");
  TypedLinear whole(rg, layout, "output"), selected(rg, layout, "output");
  RandomStream rng(seed, 1);
  test::check_training_rows(whole, selected, rg, in_dims, 0, {5, 0, 3}, rng, 1e-5);
}

TEST_CASE("TypedLinear draws Glorot weights and zero biases, and refuses what does not fit", "[train]") {
  const graph::HeteroGraph g = test::random_mag(7);
  const RgcnGraph rg(g);
  TypedLinear linear(rg, TypedLinearLayout(rg, {4, 3, 5, 2}, 3, {1}, true, "input"), "input");
  linear.initialize(11, 0, 0.5f);
  const std::vector<Parameter*> ps = linear.parameters();
  REQUIRE(ps.size() == 2);
  CHECK(ps[0]->name == "input.author.weight");
  CHECK(ps[1]->name == "input.author.bias");
  CHECK(ps[0]->weight_decay == 0.5f);
  CHECK(ps[1]->weight_decay == 0.0f);
  const double bound = std::sqrt(6.0 / (3 + 3));
  double largest = 0.0;
  for (float v : ps[0]->value.to_vector()) largest = std::max(largest, static_cast<double>(std::abs(v)));
  CHECK(largest > 0.0);
  CHECK(largest <= bound);
  for (float v : ps[1]->value.to_vector()) CHECK(v == 0.0f);
  CHECK(linear.reads(1));
  CHECK_FALSE(linear.reads(0));

  CHECK_THROWS_WITH(TypedLinearLayout(rg, {4, 3, 5}, 3, {}, true, "l"), Catch::Contains("one input width per vertex"));
  CHECK_THROWS_WITH(TypedLinearLayout(rg, {4, 3, 5, 2}, 0, {}, true, "l"), Catch::Contains("must be positive"));
  CHECK_THROWS_WITH(TypedLinearLayout(rg, {4, 3, 5, 2}, 3, {9}, true, "l"), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(TypedLinearLayout(rg, {4, 0, 5, 2}, 3, {1}, true, "l"), Catch::Contains("input width 0"));
  CHECK_THROWS_WITH(linear.backward({}, Step{}), Catch::Contains("backward needs a training forward"));
  const std::vector<std::int64_t> row{0};
  CHECK_THROWS_WITH(linear.set_training_rows(0, {row.data(), 1}), Catch::Contains("not one of its outputs"));
}
