// RgcnPanels: how an RgcnConv lays out its transform-first products so that every GEMM is wide.
// Each source type s gets one panel P_s = x_s · [W_a | W_b | ... ] (its input rows x the output
// width times the number of its bands): a band per computed relation that reads s into a
// transform-first type, and one for the root term of s when s itself is a transform-first
// output. The panels lie one after the other in a matrix H of out_dim columns (panel s is rows
// [base(s), base(s) + inputs(s) · bands(s)), its row v · bands(s) + j holding band j of input row
// v). Each transform-first type's relation stack is renumbered to read H directly (column of
// source v of relation r = base(src) + v · bands(src) + band(r)) and gets an entry of weight 1 for
// its own root band, so y_t = stack(t) · H is the whole relation sum plus the root term in one
// SpMM; the transpose of all these stacks, one below the other, gives H's gradient in one SpMM.
// Backward then needs one GEMM per source type for the weight gradients (x_sᵀ · G_s) and one for
// the input gradient (G_s · [W_a | W_b | ...]ᵀ), instead of one narrow GEMM per relation.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/csr.hpp"
#include "kernels/device.hpp"
#include "train/layers/csr_operator.hpp"
#include "train/layers/rgcn_graph.hpp"

namespace halo::train::detail {

class RgcnPanels {
 public:
  // A band of a panel: relation `relation` (>= 0), or the root term of type `root` (relation -1).
  struct Band {
    int relation = -1;
    int root = -1;
  };

  RgcnPanels() = default;
  // transform[t] != 0 for the types computed transform first; `relations` the computed relations
  // (relation order) — those into transform-first types get bands. O(entries of those types'
  // stacks) time and twice their memory (the renumbered stacks and their transpose), kept on
  // `device` (see CsrOperator).
  RgcnPanels(const RgcnGraph& graph, const std::vector<char>& transform, const std::vector<int>& relations,
             kernels::Device device = kernels::Device::cpu());

  bool empty() const { return rows_ == 0; }
  // The bands of source type s's panel, in order (relations in relation order, then the root).
  const std::vector<Band>& bands(int s) const { return bands_[static_cast<std::size_t>(s)]; }
  std::int64_t base(int s) const { return bases_[static_cast<std::size_t>(s)]; }
  std::int64_t rows() const { return rows_; }
  // y_t = stack(t) · H for a transform-first type t: outputs(t) x rows().
  const CsrOperator& stack(int t) const { return stacks_[static_cast<std::size_t>(t)]; }
  // rows() x output_rows(): H's gradient from the transform-first types' output gradients
  // stacked in type order, type t's from row output_row(t).
  const CsrOperator& transpose() const { return transpose_; }
  std::int64_t output_row(int t) const { return output_rows_[static_cast<std::size_t>(t)]; }
  std::int64_t output_rows() const { return transpose_.num_cols(); }
  // Bytes of the stacks and their transpose on their device.
  std::int64_t bytes() const;

 private:
  std::vector<std::vector<Band>> bands_;
  std::vector<std::int64_t> bases_;
  std::int64_t rows_ = 0;
  std::vector<CsrOperator> stacks_;
  std::vector<std::int64_t> output_rows_;
  CsrOperator transpose_;
};

}  // namespace halo::train::detail
