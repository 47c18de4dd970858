// HgtConv: Hu et al.'s heterogeneous graph transformer layer (WWW 2020), as PyG's HGTConv computes
// it. With F = out_dim, H heads of D = F / H columns, for every vertex type t and vertex i:
//   [k | q | v]_t = x_t · W_kqv,t + b_kqv,t                    (one typed linear per type)
//   k_r = k_src(r) · A_r · μ_r / √D,  v_r = v_src(r) · M_r      (per relation r and head: D x D)
//   e_ij = q_i · k_r,j for every entry j -> i of every relation r into t, per head
//   a_i = Σ_r Σ_j softmax_i(e)_ij · v_r,j                       (one softmax across the relations)
//   o_i = GELU(a_i) · W_out,t + b_out,t
//   y_i = σ(β_t) · o_i + (1 - σ(β_t)) · x_i                     (when x_t is F wide; else y_i = o_i)
// The relations into t run as one scaled dot-product attention over t's relation stack
// (kernels/dot_attention.hpp; graph/relation_stack.hpp): keys and values of every relation
// stacked in the stack's column blocks, built by one segmented GEMM per kind over (relation,
// head); nothing per edge is stored. μ_r (1 x H, "prior") is folded into the keys' per-head
// weights, A_r · μ_r,h / √D, composed on the host (the layer's only host round trips: μ and β,
// H + 1 floats per relation and type, read each forward; their gradients, reductions over the
// composed weights and the output, come back as doubles).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/csr_operator.hpp"
#include "train/layers/hetero_layer.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/rgcn_graph.hpp"
#include "train/layers/step.hpp"
#include "train/layers/training_rows.hpp"

namespace halo::train {

struct HgtConvOptions {
  std::int64_t heads = 1;
  // The vertex types whose outputs the layer computes; empty: every type. Relations into other
  // types are not computed, and an input that no computed term reads is not looked at.
  std::vector<int> outputs;
};

// What an HgtConv computes and keeps, from the graph's counts and the widths alone: its output
// and read types and computed relations, and the memory plan's byte counts. HgtConv builds
// exactly this. O(types + relations).
struct HgtConvLayout {
  HgtConvLayout() = default;
  // Checks the arguments as HgtConv's constructor documents (InvalidArgument naming `name`).
  HgtConvLayout(const RgcnGraph& graph, std::vector<std::int64_t> in_dims, std::int64_t out_dim,
                const HgtConvOptions& options, const std::string& name);

  std::vector<std::int64_t> in_dims;  // per type
  std::int64_t out_dim = 0;
  std::int64_t heads = 1;
  std::vector<char> computes;  // per type
  std::vector<char> reads;     // per type
  std::vector<int> computed;   // the relations into an output type, in relation order

  bool has_skip(int t) const { return in_dims[static_cast<std::size_t>(t)] == out_dim; }
  // The parameters' values (their gradients take as much again).
  std::int64_t parameter_bytes(const RgcnGraph& graph) const;
  // What a training forward keeps: per read type [k | q | v]; per output type the stacked keys
  // and values, the attention output, its GELU, the output before the skip (with a skip), the
  // softmax statistics and the composed key weights.
  std::int64_t saved_bytes(const RgcnGraph& graph) const;
  // The most backward holds besides that and the input gradients: the [k | q | v] gradients of
  // every read type, and one output type's attention, key and value gradients.
  std::int64_t workspace_bytes(const RgcnGraph& graph) const;
  // The relation stacks of the output types and their transposes.
  std::int64_t graph_bytes(const RgcnGraph& graph) const;
};

class HgtConv : public HeteroLayer {
 public:
  // in_dims: every vertex type's input width (the graph's type order); out_dim F, divisible by
  // the head count. Parameters, all zero on `device`:
  //  - per read type t: "<name>.<type>.kqv.weight" (in_t x 3F: [k | q | v]) and "...kqv.bias";
  //  - per computed relation r: "<name>.<key>.k_rel.weight" and "...v_rel.weight" (H·D x D: the
  //    heads' D x D matrices stacked) and "...prior" (1 x H);
  //  - per output type t: "<name>.<type>.out.weight" (F x F), "...out.bias", and "...skip" (1 x 1)
  //    when in_t = F.
  // The relation stacks of the output types and their transposes are kept on `device`.
  // `graph` must outlive the layer. InvalidArgument for widths that do not fit.
  HgtConv(const RgcnGraph& graph, std::vector<std::int64_t> in_dims, std::int64_t out_dim,
          const HgtConvOptions& options, const std::string& name, kernels::Device device = kernels::Device::cpu());
  // The layer of `layout`, as the constructor above builds it from the layout's arguments.
  HgtConv(const RgcnGraph& graph, HgtConvLayout layout, const std::string& name,
          kernels::Device device = kernels::Device::cpu());

  // y[t] (outputs of t x F) for inputs x[t] (inputs of t x in_t), an empty tensor for a type that
  // is not an output; x[t] of a type no computed term reads may be an empty view. In training the
  // layer keeps the views x (the caller keeps them alive and unchanged until backward) and, per
  // read type, [k | q | v]; per output type the stacked keys and values, the attention output,
  // its GELU, the output before the skip and the softmax statistics. A type with training rows
  // (set_training_rows) is computed whole and returns those rows. No streamed inputs.
  std::vector<kernels::Tensor> forward(const std::vector<kernels::ConstTensorView>& x, const Step& step,
                                       const std::vector<InputMatrix>& streamed_x = {}) override;
  // From grad_y[t] of the last training forward (ignored for types that are not outputs): adds
  // d loss / d θ to every parameter's grad and returns d loss / d x[t] for every read type whose
  // input gradient is on (an empty tensor for the others). No sink is called.
  std::vector<kernels::Tensor> backward(std::vector<kernels::Tensor> grad_y, const Step& step,
                                        const RowGradientSink& sink = {}) override;

  // Per read type: kqv weight, kqv bias; per computed relation: k_rel, v_rel, prior; per output
  // type: out weight, out bias, skip (when present). Each group in type (relation) order.
  std::vector<Parameter*> parameters() override;
  // As PyG's HGTConv.reset_parameters, with Glorot-uniform for its Linear weights: Glorot-uniform
  // kqv, k_rel, v_rel and out weights (with `weight_decay`), zero biases, priors and skip gates 1.
  void initialize(std::uint64_t seed, std::uint64_t first_stream, float weight_decay) override;

  // Whether backward returns d loss / d x[t] (on for every type by default; switch it off for a
  // type whose input is fixed features).
  void set_input_grad(int type, bool needed) override {
    input_grad_.at(static_cast<std::size_t>(type)) = needed ? 1 : 0;
  }
  bool input_grad(int type) const override { return input_grad_.at(static_cast<std::size_t>(type)) != 0; }
  bool computes(int type) const override { return layout_.computes.at(static_cast<std::size_t>(type)) != 0; }
  bool reads(int type) const override { return layout_.reads.at(static_cast<std::size_t>(type)) != 0; }
  void set_training_rows(int type, kernels::IndexView rows) override;
  std::int64_t training_rows(int type) const override;

  const HgtConvLayout& layout() const { return layout_; }

 private:
  struct Saved {
    kernels::Tensor keys, values;               // the stack's width x F
    kernels::Tensor attention, activated, out;  // outputs x F: a, GELU(a), o
    kernels::Tensor row_max, row_sum;
    std::vector<kernels::Tensor> key_weights;   // per block of the stack: A_r · μ_r / √D
  };
  bool has_skip(int t) const { return layout_.has_skip(t); }
  void check_output(int type) const;
  // The composed key weights of relation r (H·D x D) from A_r and μ_r (read on the host).
  kernels::Tensor composed_key_weight(int r) const;
  // The [k | q | v] columns of kind 0, 1 or 2 and head h of type t's rows.
  kernels::ConstTensorView head_columns(const kernels::Tensor& kqv, int kind, std::int64_t h) const;

  const RgcnGraph* graph_;
  std::string name_;
  kernels::Device device_;
  HgtConvLayout layout_;
  std::int64_t heads_;
  std::vector<char> input_grad_;
  std::vector<Parameter> kqv_weight_, kqv_bias_;       // per type (empty for types not read)
  std::vector<Parameter> k_rel_, v_rel_, prior_;       // per relation (empty for relations not computed)
  std::vector<Parameter> out_weight_, out_bias_, skip_;  // per type (empty for types not computed)
  std::vector<CsrOperator> stacks_, transposes_;       // per output type
  std::vector<TrainingRows> selection_;                // per type
  std::vector<kernels::ConstTensorView> inputs_;
  std::vector<kernels::Tensor> kqv_;                   // per read type, kept by a training forward
  std::vector<Saved> saved_;                           // per output type
  bool pending_ = false;
};

}  // namespace halo::train
