// AttentionGraph: the graph a GatConv attends over — with one self loop per vertex (rows:
// destinations, columns: sources, as PyG's GATConv adds them) and its transpose, kept on the
// layer's device — and the fused attention products over it (kernels/attention.hpp).
#pragma once

#include <cstdint>

#include "graph/csr.hpp"
#include "kernels/attention.hpp"
#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/csr_operator.hpp"

namespace halo::train {

// What a forward keeps for its backward: the softmax's statistics (vertices x heads each) and, on
// a rank, the sources' rows [h | src_score] with their halo rows.
struct AttentionStats {
  kernels::Tensor row_max;
  kernels::Tensor row_sum;
  kernels::Tensor sources;
};

// The gradients of an attention product's inputs.
struct AttentionGrads {
  kernels::Tensor h;
  kernels::Tensor src_score;
  kernels::Tensor dst_score;
};

// What a GatConv attends over. One process holds the whole graph (LocalAttentionGraph); a rank
// of a distributed run its part, whose sources include halo rows that travel each layer
// (dist::HaloAttentionGraph). Layers are written once against this interface.
class AttentionGraph {
 public:
  virtual ~AttentionGraph() = default;
  // The vertices this process owns: the rows of h, the scores and the output.
  virtual std::int64_t num_vertices() const = 0;
  // The attention aggregation of h (owned vertices x heads · F) with the per-head scores (owned
  // vertices x heads each), on the graph's device; `stats` receives what backward needs.
  virtual kernels::Tensor forward(const kernels::Tensor& h, const kernels::Tensor& src_score,
                                  const kernels::Tensor& dst_score, const kernels::AttentionSpec& spec,
                                  AttentionStats& stats) = 0;
  // The gradients of h and of both scores (owned rows) from d loss / d out of the forward with
  // these operands and `stats`.
  virtual AttentionGrads backward(const kernels::Tensor& h, const kernels::Tensor& src_score,
                                  const kernels::Tensor& dst_score, const kernels::AttentionSpec& spec,
                                  const AttentionStats& stats, const kernels::Tensor& grad_out) = 0;
};

// The whole graph on one process: the square graph with one self loop per vertex added where
// missing (graph::with_self_loops) and its transpose, kept on the device.
class LocalAttentionGraph : public AttentionGraph {
 public:
  // `g` square (InvalidArgument otherwise). O(E + V).
  LocalAttentionGraph(const graph::CsrGraph& g, kernels::Device device);
  std::int64_t num_vertices() const override { return a_.num_rows(); }
  kernels::Tensor forward(const kernels::Tensor& h, const kernels::Tensor& src_score, const kernels::Tensor& dst_score,
                          const kernels::AttentionSpec& spec, AttentionStats& stats) override;
  AttentionGrads backward(const kernels::Tensor& h, const kernels::Tensor& src_score, const kernels::Tensor& dst_score,
                          const kernels::AttentionSpec& spec, const AttentionStats& stats,
                          const kernels::Tensor& grad_out) override;

 private:
  CsrOperator a_;
  CsrOperator at_;
};

// The kernels' calls on a CSR A (rows: the destinations) and its transpose, shared by both
// graphs: h and src_score have A's columns as rows, dst_score and the output its rows.
kernels::Tensor attention_forward_on(const CsrOperator& a, kernels::ConstTensorView h, kernels::ConstTensorView src_score,
                                     kernels::ConstTensorView dst_score, const kernels::AttentionSpec& spec,
                                     kernels::AttentionIds ids, AttentionStats& stats);
// Writes the gradients of h and src_score (A's columns) into grad_h and grad_src, and returns
// that of dst_score.
kernels::Tensor attention_backward_on(const CsrOperator& a, const CsrOperator& at, kernels::ConstTensorView h,
                                      kernels::ConstTensorView src_score, kernels::ConstTensorView dst_score,
                                      const kernels::AttentionSpec& spec, kernels::AttentionIds ids,
                                      const AttentionStats& stats, const kernels::Tensor& grad_out,
                                      kernels::TensorView grad_h, kernels::TensorView grad_src);

}  // namespace halo::train
