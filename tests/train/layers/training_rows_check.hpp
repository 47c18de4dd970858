// The check of a heterogeneous layer's training rows (HeteroLayer::set_training_rows) against the
// same layer computing every row, shared by the tests of the layers that have them.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "graph/base/random.hpp"
#include "kernels/tensor.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/support/tensor_compare.hpp"
#include "train/layers/hetero_layer.hpp"
#include "train/layers/rgcn_graph.hpp"

namespace halo::test {

// `selected` (built as `whole`, same parameters order and shapes) after set_training_rows(type,
// rows): its training forward returns exactly those rows of what `whole` computes, every other
// type unchanged, and its backward from their gradient gives the parameter and input gradients
// `whole` gives from a gradient that is zero outside them (bit for bit when `tolerance` is 0, else
// to that relative error: a layer that multiplies only the selected rows sums in another order);
// an evaluation forward still returns every row. Random parameters and inputs (in_dims per type,
// `graph`'s input rows).
inline void check_training_rows(train::HeteroLayer& whole, train::HeteroLayer& selected, const train::RgcnGraph& graph,
                                const std::vector<std::int64_t>& in_dims, int type,
                                const std::vector<std::int64_t>& rows, RandomStream& rng, double tolerance = 0.0) {
  const auto same = [tolerance](const kernels::Tensor& p, const kernels::Tensor& q) {
    if (tolerance == 0.0) return same_bits(p, q);
    return p.rows() == q.rows() && p.cols() == q.cols() &&
           (p.numel() == 0 || max_relative_error(to_dense(p), to_dense(q), 1e-6) < tolerance);
  };
  const std::vector<train::Parameter*> a = whole.parameters(), b = selected.parameters();
  REQUIRE(a.size() == b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    Dense value = random_dense(rng, a[k]->value.rows(), a[k]->value.cols(), 0.8);
    a[k]->value.copy_from(to_tensor(value).view());
    b[k]->value.copy_from(to_tensor(value).view());
  }
  selected.set_training_rows(type, {rows.data(), static_cast<std::int64_t>(rows.size())});
  CHECK(selected.training_rows(type) == static_cast<std::int64_t>(rows.size()));
  const int types = graph.num_vertex_types();
  std::vector<kernels::Tensor> x;
  std::vector<kernels::ConstTensorView> views;
  for (int t = 0; t < types; ++t) {
    Dense d = random_dense(rng, graph.num_inputs(t), in_dims[static_cast<std::size_t>(t)]);
    x.push_back(to_tensor(d));
  }
  for (const kernels::Tensor& t : x) views.push_back(t.view());
  train::Step step;
  const std::vector<kernels::Tensor> y_whole = whole.forward(views, step), y_selected = selected.forward(views, step);
  std::vector<kernels::Tensor> g_whole, g_selected;
  for (int t = 0; t < types; ++t) {
    const auto ts = static_cast<std::size_t>(t);
    if (!whole.computes(t)) {
      g_whole.emplace_back();
      g_selected.emplace_back();
      continue;
    }
    if (t != type) {
      CHECK(same_bits(y_selected[ts], y_whole[ts]));
      Dense g = random_dense(rng, y_whole[ts].rows(), y_whole[ts].cols());
      g_whole.push_back(to_tensor(g));
      g_selected.push_back(to_tensor(g));
      continue;
    }
    REQUIRE(y_selected[ts].rows() == static_cast<std::int64_t>(rows.size()));
    Dense g = random_dense(rng, y_selected[ts].rows(), y_selected[ts].cols());
    Dense spread(y_whole[ts].rows(), y_whole[ts].cols());
    for (std::size_t k = 0; k < rows.size(); ++k) {
      CHECK(same(rows_of(y_selected[ts], static_cast<std::int64_t>(k), static_cast<std::int64_t>(k) + 1),
                 rows_of(y_whole[ts], rows[k], rows[k] + 1)));
      for (std::int64_t c = 0; c < g.cols; ++c) spread.at(rows[k], c) = g.at(static_cast<std::int64_t>(k), c);
    }
    g_whole.push_back(to_tensor(spread));
    g_selected.push_back(to_tensor(g));
  }
  const std::vector<kernels::Tensor> dx_whole = whole.backward(std::move(g_whole), step);
  const std::vector<kernels::Tensor> dx_selected = selected.backward(std::move(g_selected), step);
  for (std::size_t k = 0; k < a.size(); ++k) {
    CAPTURE(a[k]->name);
    CHECK(same(a[k]->grad, b[k]->grad));
  }
  for (int t = 0; t < types; ++t) {
    CAPTURE(t);
    CHECK(same(dx_whole[static_cast<std::size_t>(t)], dx_selected[static_cast<std::size_t>(t)]));
  }
  train::Step eval;
  eval.training = false;
  const std::vector<kernels::Tensor> all = selected.forward(views, eval);
  CHECK(all[static_cast<std::size_t>(type)].rows() == graph.num_outputs(type));
}

}  // namespace halo::test
