// ModelShape: the layer widths of a GCN / GraphSAGE model and the bytes it holds, from its
// settings alone. The memory plan reads it before any parameter, operator or activation exists,
// and Model reports its numbers from the same object, so the plan and the model cannot disagree.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/device.hpp"
#include "train/models/model_config.hpp"

namespace halo::train {

class ModelShape {
 public:
  // Throws InvalidArgument for settings Model refuses: a kind other than gcn, sage or gat, no layer,
  // a hidden width below 1 with more than one layer, a non-positive input width or class count,
  // a negative weight decay, an activation dtype other than f32 or bf16. `device` is where the
  // model trains: the attention kernels' workspace differs between the CPU and a GPU. O(1).
  ModelShape(const ModelConfig& config, std::int64_t in_dim, std::int64_t num_classes,
             const kernels::Device& device = kernels::Device::cpu());

  const ModelConfig& config() const { return config_; }
  std::int64_t in_dim() const { return in_dim_; }
  std::int64_t num_classes() const { return num_classes_; }
  const kernels::Device& device() const { return device_; }
  int layers() const { return config_.layers; }
  bool attention() const { return config_.kind == "gat"; }
  // The width between layers: hidden, or for GAT its heads · hidden concatenated.
  std::int64_t hidden_width() const { return attention() ? config_.heads * config_.hidden : config_.hidden; }
  // Layer i's input and output widths: in_dim, hidden_width, ..., hidden_width, num_classes.
  std::int64_t layer_in(int i) const { return i == 0 ? in_dim_ : hidden_width(); }
  std::int64_t layer_out(int i) const { return i + 1 == config_.layers ? num_classes_ : hidden_width(); }
  // GAT's heads and columns per head in layer i: heads x hidden, the last out_heads x classes
  // (averaged). 1 x layer_out(i) for the other kinds.
  std::int64_t layer_heads(int i) const {
    return !attention() ? 1 : i + 1 == config_.layers ? config_.out_heads : config_.heads;
  }
  std::int64_t head_width(int i) const {
    return !attention() ? layer_out(i) : i + 1 == config_.layers ? num_classes_ : config_.hidden;
  }
  // Batch norm follows layer i's convolution (every layer but the last, with batch_norm).
  bool normalized(int i) const { return config_.batch_norm && i + 1 < config_.layers; }
  // Layer i's convolution has a bias: config.bias, unless batch norm follows. Batch norm
  // subtracts the column means, so a bias before it cancels out: its gradient is rounding noise,
  // which Adam would turn into full-size steps whose signs depend on the summation order (thread
  // count, partitioning). Batch norm's beta is the shift instead.
  bool has_bias(int i) const { return config_.bias && !normalized(i); }
  // Layer i computes (Â·x)·W, aggregating its narrower side (conv_aggregates_first); GAT never does.
  bool aggregates_first(int i) const;
  // Layer i's dropout acts in place on layer i-1's ReLU output (GCN, GraphSAGE; not the first
  // layer, whose input is the features, nor GAT's ELU, whose backward needs the undropped value).
  bool drops_in_place(int i) const { return i > 0 && !attention(); }
  // Layer i's dropout acts on its input chunk by chunk as the layer reads it (InputMatrix::then),
  // each product's pass drawing the same mask again, so no dropped copy is kept: a layer that
  // transforms first (it reads x only through products) with a dropout that is not in place. The
  // input dropout of a layer aggregating first still makes a copy: its SpMM needs x whole.
  bool drops_while_reading(int i) const { return dropout(i) > 0.0f && !drops_in_place(i) && !aggregates_first(i); }
  // Layer i's dropout probability: the input dropout for the first layer, else the dropout.
  float dropout(int i) const { return i == 0 ? config_.input_dropout : config_.dropout; }
  // Layer i aggregates first and computes Â·x again in backward instead of keeping it
  // (config.recompute "aggregation" or "layer").
  bool recomputes_aggregation(int i) const {
    return (config_.recompute == "aggregation" || config_.recompute == "layer") && aggregates_first(i);
  }
  // GAT's layers compute x·W and its scores again in backward instead of keeping them
  // (config.recompute "layer"; the softmax statistics stay).
  bool recomputes_projection() const { return config_.recompute == "layer" && attention(); }
  // Layer i's backward reads its input x (to multiply it by the output's gradient, or to compute
  // Â·x again): all but a GCN layer that aggregates first and keeps Â·x, so a dropped copy of its
  // input can go as soon as its forward is done.
  bool reads_input_in_backward(int i) const {
    return !(config_.kind == "gcn" && aggregates_first(i) && !recomputes_aggregation(i));
  }
  // config.activation_dtype "bf16": what is kept in bfloat16. Layer i's output, when it is a hidden
  // layer whose successor transforms first (x · W, which widens it chunk by chunk; a successor
  // aggregating first needs it whole in float32; GAT's always transform first, and ELU's backward
  // reads the rounded output); Â·x of a layer that aggregates first and keeps
  // it. (The input dropout's copy of the features, made only for a first layer aggregating
  // first, stays float32: narrowing it would hold the float32 copy and the bfloat16 one at once,
  // more than it saves.)
  bool output_in_bf16(int i) const { return bf16() && i + 1 < layers() && !aggregates_first(i + 1); }
  bool aggregation_in_bf16(int i) const { return bf16() && aggregates_first(i) && !recomputes_aggregation(i); }
  // Recomputing Â·x would hold less: some layer aggregates first, other than a GCN first layer
  // whose input is dropped (keeping Â·x, it lets the dropped copy go after forward; recomputing
  // would keep that copy instead, as many bytes).
  bool recomputing_saves() const;
  // The recompute setting a run of this shape takes: config.recompute, with "auto" resolved to
  // "aggregation" when the plan keeping Â·x is `short_of_memory` (would stream the features or not
  // fit) and recomputing saves, else "none".
  std::string recompute_for(bool short_of_memory) const;

  // The peak of a training step apart from the features, for `vertices` rows: Model's forward,
  // the loss's gradient and Model's backward walked allocation by allocation (the logits and their
  // gradient, every layer's
  // temporaries and what it keeps for backward: dropout outputs not taken in place, Â·x of
  // aggregate-first layers, GAT's x · W with its scores and softmax statistics, conv outputs kept
  // for batch norm with its statistics, activation outputs; in backward the gradients, GAT's
  // scores' gradients and the attention kernel's workspace, kernels::attention_workspace_width), the most alive at
  // once. On a rank (halo_rows >= 0) also the aggregations' inputs and gradients extended by its
  // halo rows, and GAT's [x · W | source scores] of every local row. O(layers).
  std::int64_t activation_bytes(std::int64_t vertices, std::int64_t halo_rows = -1) const;
  // What activation_bytes owes to the first layer's input being a resident tensor: the input
  // dropout's output and, when the first layer aggregates first, Â·x, neither of which exists when
  // the features are streamed (dropout acts on the staged chunks, the layer transforms first) or
  // their aggregation precomputed. O(layers).
  std::int64_t input_activation_bytes(std::int64_t vertices, std::int64_t halo_rows = -1) const;
  // The widest row a rank's halo exchange moves: GAT's x · W with its source scores, else the
  // widest aggregation (the first layer's output width, for streamed features). O(layers).
  std::int64_t exchange_width() const;
  // The parameters' values (their gradients take as much again): the conv weights (GraphSAGE two
  // per layer; GAT's W and its two attention vectors per head), the biases and the batch norms'
  // gamma and beta. O(layers).
  std::int64_t parameter_bytes() const;

 private:
  bool bf16() const { return config_.activation_dtype == "bf16"; }
  // activation_bytes with the first layer's input resident (input_given false) or streamed, on one
  // process (halo_rows -1) or a rank.
  std::int64_t step_peak_bytes(std::int64_t vertices, std::int64_t halo_rows, bool input_given) const;

  ModelConfig config_;
  std::int64_t in_dim_;
  std::int64_t num_classes_;
  kernels::Device device_;
};

// With the first aggregation precomputed, the first layer still multiplies the features
// themselves (GraphSAGE's root term), so they stay beside Â·X; a GCN layer reads Â·X alone.
inline bool keeps_features_beside_aggregation(const ModelConfig& m) { return m.kind == "sage"; }

}  // namespace halo::train
