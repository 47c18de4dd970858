// RgatConv: relational graph attention as a sum of per-relation GAT layers, the model PyG builds
// with HeteroConv({r: GATConv((in_src, in_dst), F, heads=H, add_self_loops=False)}, aggr="sum").
// For every output type t and every relation r = (s -> t), per head k:
//   h_r = x_s · W_src,r                       (H heads of F columns)
//   src_r[j, k] = h_r[j, head k] · a_src,r[k]   dst_r[i, k] = (x_t · W_dst,r)[i, head k] · a_dst,r[k]
//                                               computed as x_t · (W_dst,r folded with a_dst,r: in_t x H)
//   y_t[i] = Σ_r ( Σ_{j ∈ N_r(i)} α^r_ij · h_r[j]  (heads concatenated, or averaged)  + b_r )
// with α^r the GAT softmax (LeakyReLU scores) over row i's entries of relation r alone. Each
// relation's attention runs fused over its block of t's relation stack (kernels/attention.hpp):
// nothing per edge is stored. Attention dropout (PyG's GATConv dropout) keys each relation's mask
// on (seed, epoch, layer and relation, the edge's global vertex ids, head): the same on every
// rank and thread count once set_vertex_ids has given the global ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/csr_operator.hpp"
#include "train/layers/hetero_layer.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/rgcn_graph.hpp"
#include "train/layers/step.hpp"
#include "train/layers/training_rows.hpp"

namespace halo::train {

struct RgatConvOptions {
  std::int64_t heads = 1;
  bool concat = true;  // heads concatenated (H · F columns) or averaged (F)
  float negative_slope = 0.2f;
  float attention_dropout = 0.0f;  // p in [0, 1) on the coefficients, in training
  std::uint32_t layer = 0;         // the layer's number in its model: the masks' key
  // The vertex types whose outputs the layer computes; empty: every type.
  std::vector<int> outputs;
};

// What an RgatConv computes and keeps, from the graph's counts and the widths alone.
struct RgatConvLayout {
  RgatConvLayout() = default;
  // out_dim: F, the columns of one head. InvalidArgument naming `name` for widths that do not fit.
  RgatConvLayout(const RgcnGraph& graph, std::vector<std::int64_t> in_dims, std::int64_t out_dim,
                 const RgatConvOptions& options, const std::string& name);

  std::vector<std::int64_t> in_dims;  // per type
  std::int64_t out_dim = 0;           // per head
  RgatConvOptions options;
  std::vector<char> computes;  // per type
  std::vector<char> reads;     // per type
  std::vector<int> computed;   // the relations into an output type, in relation order

  // The output's columns: heads · out_dim concatenated, out_dim averaged.
  std::int64_t out_width() const { return options.concat ? options.heads * out_dim : out_dim; }
  std::int64_t parameter_bytes(const RgcnGraph& graph) const;
  // Per computed relation: h_r, the folded W_dst,r, both scores and the softmax statistics.
  std::int64_t saved_bytes(const RgcnGraph& graph) const;
  // The most backward holds at once besides the output and input gradients, the saved tensors
  // included: backward runs the relations as forward did (by destination type, each type's in its
  // stack's order) and frees each one's saved tensors when its gradients are done, but for the
  // folded weight, which it keeps with the destination scores' gradient and the fold's until every
  // relation is done; so one relation's workspace (the attention's and the projections' gradients)
  // meets the saved tensors of it and of the relations after it, and what the ones before it left.
  // chunked (per type, or empty): the inputs read chunk by chunk, whose source-side products
  // (x_srcᵀ · dh_r) wait for one pass at the end: their relations' dh_r stay until then.
  std::int64_t backward_held_bytes(const RgcnGraph& graph, const std::vector<char>& chunked = {}) const;
  // Every computed relation's block and its transpose.
  std::int64_t graph_bytes(const RgcnGraph& graph) const;
};

class RgatConv : public HeteroLayer {
 public:
  // Parameters, zero on `device`, per computed relation r (its key k): "<name>.<k>.lin_src.weight"
  // (in_src x H·F), "<name>.<k>.lin_dst.weight" (in_dst x H·F), "<name>.<k>.att_src" and
  // "...att_dst" (H x F), "<name>.<k>.bias" (1 x out_width). Each computed relation's block of its
  // destination's relation stack and the block's transpose are kept on `device`. `graph` must
  // outlive the layer.
  RgatConv(const RgcnGraph& graph, RgatConvLayout layout, const std::string& name,
           kernels::Device device = kernels::Device::cpu());

  // Per computed relation two GEMMs (h_r and x_t times the folded W_dst,r), the head scores and the fused
  // attention over its block, summed into y_t. Training keeps the views of x. A type with
  // training rows is computed whole and returns those rows. Every input is read only through
  // those products and their transposes in backward (reads_by_products), so any may come as
  // streamed_x[t] (a dropout applied as its chunks are read); training keeps those handles.
  std::vector<kernels::Tensor> forward(const std::vector<kernels::ConstTensorView>& x, const Step& step,
                                       const std::vector<InputMatrix>& streamed_x = {}) override;
  std::vector<kernels::Tensor> backward(std::vector<kernels::Tensor> grad_y, const Step& step,
                                        const RowGradientSink& sink = {}) override;

  // Per computed relation: lin_src, lin_dst, att_src, att_dst, bias.
  std::vector<Parameter*> parameters() override;
  // Glorot-uniform projections (with `weight_decay`) and attention vectors (as PyG's glorot on
  // its 1 x H x F tensors), zero biases.
  void initialize(std::uint64_t seed, std::uint64_t first_stream, float weight_decay) override;

  void set_input_grad(int type, bool needed) override {
    input_grad_.at(static_cast<std::size_t>(type)) = needed ? 1 : 0;
  }
  bool input_grad(int type) const override { return input_grad_.at(static_cast<std::size_t>(type)) != 0; }
  bool computes(int type) const override { return layout_.computes.at(static_cast<std::size_t>(type)) != 0; }
  bool reads(int type) const override { return layout_.reads.at(static_cast<std::size_t>(type)) != 0; }
  bool reads_by_products(int type) const override { return reads(type); }
  void set_training_rows(int type, kernels::IndexView rows) override;
  std::int64_t training_rows(int type) const override;
  // Without it the masks are keyed on the type-local row numbers.
  void set_vertex_ids(const std::vector<kernels::IndexView>& ids) override;

  const RgatConvLayout& layout() const { return layout_; }

 private:
  struct Relation {  // one computed relation's parameters, operators and saved tensors
    int index = 0, src = 0, dst = 0;
    Parameter lin_src, lin_dst, att_src, att_dst, bias;
    CsrOperator block, transpose;
    std::optional<kernels::DeviceIndex> dst_ids, src_ids;          // global ids of the block's rows and columns
    // Kept by a training forward; dst_fold: W_dst,r with a_dst,r folded in (in_t x H).
    kernels::Tensor h, dst_fold, src_score, dst_score, row_max, row_sum;
    void release() {
      release_keeping_fold();
      dst_fold = kernels::Tensor();
    }
    // All but the folded weight, which backward reads once every relation is done.
    void release_keeping_fold() {
      for (kernels::Tensor* t : {&h, &src_score, &dst_score, &row_max, &row_sum}) *t = kernels::Tensor();
    }
  };
  void check_output(int type) const;
  kernels::AttentionSpec spec(const Relation& rel, const Step& step) const;
  kernels::AttentionIds ids(const Relation& rel) const;

  const RgcnGraph* graph_;
  std::string name_;
  kernels::Device device_;
  RgatConvLayout layout_;
  std::vector<Relation> relations_;  // the computed relations, in relation order
  kernels::Tensor head_mean_;        // H·F x F, averaging the heads (concat off)
  std::vector<char> input_grad_;
  std::vector<TrainingRows> selection_;  // per type
  std::vector<InputMatrix> inputs_;      // per type, kept by a training forward
  bool pending_ = false;
};

}  // namespace halo::train
