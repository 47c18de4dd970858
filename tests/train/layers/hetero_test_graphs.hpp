// Heterogeneous test graphs and the adapter that lets the shared gradient check
// (tests/train/gradient_check.hpp) run a heterogeneous layer: a small ogbn-mag-like graph with
// repeated edges, empty rows and an empty type, and the layer's per-type inputs and outputs
// stacked into one tensor.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "graph/hetero_graph.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/layer.hpp"
#include "train/layers/rgcn_conv.hpp"
#include "train/layers/rgcn_graph.hpp"

namespace halo::test {

inline graph::CsrGraph csr(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& dst,
                           const std::vector<std::int64_t>& src) {
  return graph::csr_from_coo<std::int64_t>(rows, cols, dst.data(), src.data(), nullptr,
                                           static_cast<std::int64_t>(dst.size()));
}

// A random relation (rows: dst vertices, columns: src vertices) with repeated edges and rows
// without entries.
inline graph::CsrGraph random_relation(RandomStream& rng, std::int64_t rows, std::int64_t cols, std::int64_t edges) {
  std::vector<std::int64_t> dst, src;
  for (std::int64_t e = 0; e < edges && rows > 0 && cols > 0; ++e) {
    dst.push_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(rows))));
    src.push_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(cols))));
  }
  return csr(rows, cols, dst, src);
}

//  paper (6) <-writes- author (7), author <-rev_writes- paper, paper <-cites- paper,
//  field (3) <-has_topic- paper, paper <-rev_has_topic- field, and a type "venue" with no
//  vertices that publishes papers and lists fields (relations of empty blocks and rows).
inline graph::HeteroGraph random_mag(std::uint64_t seed) {
  RandomStream rng(seed, 0x6d6167ull);
  graph::HeteroGraph g;
  g.add_vertex_type("paper", 6);
  g.add_vertex_type("author", 7);
  g.add_vertex_type("field", 3);
  g.add_vertex_type("venue", 0);
  g.add_relation({"author", "writes", "paper"}, random_relation(rng, 6, 7, 12));
  g.add_relation({"paper", "cites", "paper"}, random_relation(rng, 6, 6, 9));
  g.add_relation({"paper", "has_topic", "field"}, random_relation(rng, 3, 6, 7));
  g.add_relation({"venue", "publishes", "paper"}, random_relation(rng, 6, 0, 0));
  g.add_relation({"field", "rev_has_topic", "paper"}, random_relation(rng, 6, 3, 7));
  g.add_relation({"paper", "rev_writes", "author"}, random_relation(rng, 7, 6, 12));
  g.add_relation({"field", "listed_by", "venue"}, random_relation(rng, 0, 3, 0));
  return g;
}

// A rank's part of a two-type graph: papers own 4 of their 7 input rows, authors 3 of 5 (halo rows
// after the owned ones); author writes paper, paper cites paper, paper rev_writes author, random
// with repeated entries. Holds the relations its graph points to: neither copied nor moved.
struct TwoTypePart {
  graph::CsrGraph writes, cites, rev_writes;
  train::RgcnGraph graph;

  explicit TwoTypePart(RandomStream& rng)
      : writes(random_relation(rng, 4, 5, 9)),
        cites(random_relation(rng, 4, 7, 8)),
        rev_writes(random_relation(rng, 3, 7, 9)),
        graph({"paper", "author"}, {4, 3}, {7, 5},
              {{{"author", "writes", "paper"}, 1, 0, &writes},
               {{"paper", "cites", "paper"}, 0, 0, &cites},
               {{"paper", "rev_writes", "author"}, 0, 1, &rev_writes}}) {}
  TwoTypePart(const TwoTypePart&) = delete;
  TwoTypePart& operator=(const TwoTypePart&) = delete;
};

// Where each type's rows sit in the stacked inputs and outputs of StackedHetero.
inline std::vector<std::int64_t> type_rows(const graph::HeteroGraph& g) {
  std::vector<std::int64_t> rows{0};
  for (int t = 0; t < g.num_vertex_types(); ++t) rows.push_back(rows.back() + g.vertex_count(t));
  return rows;
}

// A heterogeneous layer (RgcnConv, HgtConv: forward and backward over one tensor per type) seen as
// one Layer, so the shared gradient check applies: the input holds every type's
// rows stacked type after type, `width` columns of which type t reads its first in_dims[t] (a
// strided view); the output and its gradient are stacked the same way.
template <class Conv>
class StackedHetero : public train::Layer {
 public:
  StackedHetero(Conv& conv, std::vector<std::int64_t> rows, std::vector<std::int64_t> in_dims, std::int64_t out_dim)
      : StackedHetero(conv, rows, rows, std::move(in_dims), out_dim) {}
  // Inputs stacked by in_rows, outputs by out_rows (a part: each type's outputs are its first
  // input rows).
  StackedHetero(Conv& conv, std::vector<std::int64_t> in_rows, std::vector<std::int64_t> out_rows,
              std::vector<std::int64_t> in_dims, std::int64_t out_dim)
      : conv_(conv), rows_(std::move(in_rows)), out_rows_(std::move(out_rows)), in_dims_(std::move(in_dims)),
        out_dim_(out_dim) {}

  kernels::Tensor forward(const kernels::Tensor& x, const train::Step& step) override {
    std::vector<kernels::ConstTensorView> views;
    for (std::size_t t = 0; t + 1 < rows_.size(); ++t)
      views.push_back({x.data() + rows_[t] * x.cols(), rows_[t + 1] - rows_[t], in_dims_[t], x.cols(), x.device()});
    const std::vector<kernels::Tensor> ys = conv_.forward(views, step);
    kernels::Tensor y = kernels::Tensor::zeros(out_rows_.back(), out_dim_);
    for (std::size_t t = 0; t < ys.size(); ++t)
      if (conv_.computes(static_cast<int>(t)))
        kernels::copy(ys[t].view(), y.view().slice_rows(out_rows_[t], out_rows_[t + 1]));
    width_ = x.cols();
    return y;
  }
  kernels::Tensor backward(kernels::Tensor grad_y, const train::Step& step) override {
    std::vector<kernels::Tensor> parts;
    for (std::size_t t = 0; t + 1 < out_rows_.size(); ++t) {
      parts.push_back(kernels::Tensor::empty(out_rows_[t + 1] - out_rows_[t], grad_y.cols()));
      kernels::copy(grad_y.view().slice_rows(out_rows_[t], out_rows_[t + 1]), parts.back().view());
    }
    const std::vector<kernels::Tensor> gx = conv_.backward(std::move(parts), step);
    kernels::Tensor out = kernels::Tensor::zeros(rows_.back(), width_);
    for (std::size_t t = 0; t < gx.size(); ++t)
      if (!gx[t].empty())
        kernels::copy(gx[t].view(), {out.data() + rows_[t] * width_, rows_[t + 1] - rows_[t], in_dims_[t], width_,
                                   kernels::Device::cpu()});
    return out;
  }
  std::vector<train::Parameter*> parameters() override { return conv_.parameters(); }
  std::int64_t saved_bytes(std::int64_t /*vertices*/) const override {
    if constexpr (std::is_same_v<Conv, train::RgcnConv>)
      return conv_.saved_bytes();
    else
      return 0;
  }

 private:
  Conv& conv_;
  std::vector<std::int64_t> rows_;
  std::vector<std::int64_t> out_rows_;
  std::vector<std::int64_t> in_dims_;
  std::int64_t out_dim_;
  std::int64_t width_ = 0;
};

}  // namespace halo::test
