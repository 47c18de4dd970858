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

// The layout of the panels, decided from the graph's counts alone (no matrix is built): the
// bands of every source type's panel, where each panel lies in H, and the sizes of the
// renumbered stacks and their transpose. RgcnPanels builds exactly this; the memory plan reads
// it before anything exists. O(types + relations).
struct RgcnPanelLayout {
  // A band of a panel: relation `relation` (>= 0), or the root term of type `root` (relation -1).
  struct Band {
    int relation = -1;
    int root = -1;
  };

  RgcnPanelLayout() = default;
  // transform[t] != 0 for the types computed transform first; `relations` the computed relations
  // (relation order): those into transform-first types get bands.
  RgcnPanelLayout(const RgcnGraph& graph, const std::vector<char>& transform, const std::vector<int>& relations);

  std::vector<std::vector<Band>> bands;  // per source type, in order (relations, then the root)
  std::vector<int> band_of;              // per relation: its band in its source's panel, or -1
  std::vector<int> root_band;            // per type: the band of its root term, or -1
  std::vector<std::int64_t> bases;       // per source type: its panel's first row of H
  std::int64_t rows = 0;                 // H's rows
  std::vector<std::int64_t> output_rows; // per type: its first row in the stacked output gradients
  std::int64_t total_output_rows = 0;
  std::int64_t entries = 0;              // of all renumbered stacks (the transpose has as many)
  bool wide = false;                     // 64-bit column ids (H has more rows than int32 reaches)

  // Whether type t is computed transform first (it has a root band).
  bool transforms(int t) const { return root_band[static_cast<std::size_t>(t)] >= 0; }
  // Bytes of the renumbered stacks and their transpose in host memory (a GPU copy adds its
  // long-row tables: kernels/cuda/device_csr.hpp).
  std::int64_t bytes(const RgcnGraph& graph) const;
};

class RgcnPanels {
 public:
  using Band = RgcnPanelLayout::Band;

  RgcnPanels() = default;
  // The panels of `layout`: O(entries of the transform-first types' stacks) time and twice their
  // memory (the renumbered stacks and their transpose), kept on `device` (see CsrOperator).
  explicit RgcnPanels(const RgcnGraph& graph, RgcnPanelLayout layout, kernels::Device device = kernels::Device::cpu());

  bool empty() const { return layout_.rows == 0; }
  // The bands of source type s's panel, in order (relations in relation order, then the root).
  const std::vector<Band>& bands(int s) const { return layout_.bands[static_cast<std::size_t>(s)]; }
  std::int64_t base(int s) const { return layout_.bases[static_cast<std::size_t>(s)]; }
  std::int64_t rows() const { return layout_.rows; }
  // y_t = stack(t) · H for a transform-first type t: outputs(t) x rows().
  const CsrOperator& stack(int t) const { return stacks_[static_cast<std::size_t>(t)]; }
  // rows() x output_rows(): H's gradient from the transform-first types' output gradients
  // stacked in type order, type t's from row output_row(t).
  const CsrOperator& transpose() const { return transpose_; }
  std::int64_t output_row(int t) const { return layout_.output_rows[static_cast<std::size_t>(t)]; }
  std::int64_t output_rows() const { return layout_.total_output_rows; }
  // Bytes of the stacks and their transpose on their device.
  std::int64_t bytes() const;

 private:
  RgcnPanelLayout layout_;
  std::vector<CsrOperator> stacks_;
  CsrOperator transpose_;
};

}  // namespace halo::train::detail
