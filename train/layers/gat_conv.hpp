// GatConv: Veličković et al.'s graph attention layer, multi-head, as PyG's GATConv computes it:
// h = x · W (heads x F columns), per-head scores a_srcᵀ·h_j and a_dstᵀ·h_i, the fused attention
// aggregation over the graph with self loops (train/layers/attention_graph.hpp, kernels/
// attention.hpp: attention dropout, LeakyReLU, softmax over each vertex's in-neighbours), then the
// heads concatenated (heads · F columns) or averaged (F columns), optionally plus a residual x · W_res
// (PyG's GATConv(residual=True): a linear map of the layer's input, no bias of its own), plus a
// bias.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/attention_graph.hpp"
#include "train/layers/layer_input.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/step.hpp"

namespace halo::train {

// Bytes a GatConv of `heads` heads of `width` columns keeps from forward to backward for
// `vertices` rows: h = x · W and four vertices x heads tensors (the two scores and the softmax's
// row maximum and sum); views of its input are the caller's.
inline std::int64_t gat_saved_bytes(std::int64_t heads, std::int64_t width, std::int64_t vertices) {
  return vertices * (heads * width + 4 * heads) * static_cast<std::int64_t>(sizeof(float));
}

struct GatConvOptions {
  std::int64_t heads = 1;
  std::int64_t out_per_head = 1;  // F
  bool concat = true;             // heads side by side; false: their mean
  bool bias = true;
  bool residual = false;  // out += x · W_res
  float negative_slope = 0.2f;
  float attention_dropout = 0.0f;  // on the coefficients, in training
  std::uint32_t layer = 0;         // keys the attention dropout's mask apart from other layers'
};

class GatConv : public GraphConv {
 public:
  // Parameters "<name>.weight" (in_dim x heads · F), "<name>.att_src" and "<name>.att_dst"
  // (heads x F), with bias "<name>.bias" (1 x the output width), with a residual "<name>.res_weight"
  // (in_dim x the output width), all zero on `device`.
  // `graph` must outlive the layer.
  GatConv(AttentionGraph& graph, std::int64_t in_dim, const GatConvOptions& options, const std::string& name,
          kernels::Device device = kernels::Device::cpu());

  using GraphConv::forward;
  // One GEMM (x · W; a streamed x goes chunk by chunk), the two per-head score passes, the fused
  // attention pass, with mean heads one small GEMM, the residual's GEMM added into the output,
  // the bias. A training forward keeps x (its
  // handle), h, the scores and the softmax's row statistics. A precomputed Â·x is refused.
  kernels::Tensor forward(const LayerInput& x, const Step& step) override;
  // The attention backward (two passes over the graph), the scores' backward into h's gradient
  // and a_src's, a_dst's, then dW += xᵀ · dh (and dW_res += xᵀ · dy, in the same pass over x) and
  // dx = dh · Wᵀ (+ dy · W_resᵀ) when the input gradient is on.
  kernels::Tensor backward(kernels::Tensor grad_y, const Step& step) override;
  std::vector<Parameter*> parameters() override;
  // gat_saved_bytes, less x·W and its scores when they are recomputed.
  std::int64_t saved_bytes(std::int64_t vertices) const override {
    const std::int64_t recomputed =
        recompute_projection_ ? vertices * (options_.heads * options_.out_per_head + 2 * options_.heads) * 4 : 0;
    return gat_saved_bytes(options_.heads, options_.out_per_head, vertices) - recomputed;
  }
  // In training keep only x's handles (and the softmax statistics) and compute x·W and the scores
  // again at the start of backward: vertices x (heads · F + 2 · heads) floats less from forward to
  // backward for one more GEMM (and a streamed x's pass). The GEMM is deterministic, so the
  // gradients are bitwise those of the kept tensors. Off by default.
  void set_recompute_projection(bool on) { recompute_projection_ = on; }
  // Always transforms first: the attention needs x · W of every source.
  bool aggregates_first() const override { return false; }

  // The width of the output: heads · F when concatenated, else F.
  std::int64_t out_dim() const { return options_.concat ? options_.heads * options_.out_per_head : options_.out_per_head; }

 private:
  kernels::AttentionSpec spec(const Step& step) const;

  AttentionGraph* graph_;
  std::string name_;
  GatConvOptions options_;
  Parameter weight_;
  Parameter att_src_;
  Parameter att_dst_;
  Parameter bias_;
  Parameter residual_;
  kernels::Tensor head_mean_;  // without concat: (heads · F) x F, [I/heads; ...; I/heads]
  LayerInput input_;
  kernels::Tensor h_, src_score_, dst_score_;
  AttentionStats stats_;
  bool saved_ = false;
  bool recompute_projection_ = false;
};

}  // namespace halo::train
