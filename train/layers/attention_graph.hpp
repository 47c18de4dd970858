// AttentionGraph: the graph a GatConv attends over — the square graph with one self loop per
// vertex (rows: destinations, columns: sources, as PyG's GATConv adds them) and its transpose,
// kept on the layer's device — and the fused attention products over it (kernels/attention.hpp).
#pragma once

#include <cstdint>

#include "graph/csr.hpp"
#include "kernels/attention.hpp"
#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/csr_operator.hpp"

namespace halo::train {

// The softmax statistics a forward keeps for its backward (vertices x heads each).
struct AttentionStats {
  kernels::Tensor row_max;
  kernels::Tensor row_sum;
};

// The gradients of an attention product's inputs.
struct AttentionGrads {
  kernels::Tensor h;
  kernels::Tensor src_score;
  kernels::Tensor dst_score;
};

class AttentionGraph {
 public:
  // `g` square (InvalidArgument otherwise); self loops added where missing (graph::with_self_loops),
  // the transpose built, both kept on `device`. O(E + V).
  AttentionGraph(const graph::CsrGraph& g, kernels::Device device);

  std::int64_t num_vertices() const { return a_.num_rows(); }
  std::int64_t num_entries() const { return a_.num_edges(); }
  // Bytes of the two matrices on their device.
  std::int64_t bytes() const { return a_.bytes() + at_.bytes(); }

  // The attention aggregation of h (vertices x heads · F) with the per-head scores (vertices x
  // heads each), on the graph's device; `stats` receives what backward needs.
  kernels::Tensor forward(const kernels::Tensor& h, const kernels::Tensor& src_score, const kernels::Tensor& dst_score,
                          const kernels::AttentionSpec& spec, AttentionStats& stats) const;
  // The gradients of h and of both scores from d loss / d out of the forward with these operands.
  AttentionGrads backward(const kernels::Tensor& h, const kernels::Tensor& src_score, const kernels::Tensor& dst_score,
                          const kernels::AttentionSpec& spec, const AttentionStats& stats,
                          const kernels::Tensor& grad_out) const;

 private:
  CsrOperator a_;
  CsrOperator at_;
  kernels::Device device_;
};

}  // namespace halo::train
