// ModelShape: the widths, parameters and activation bytes of a GCN / GraphSAGE stack.
#include "train/models/model_shape.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/attention.hpp"
#include "kernels/bf16_rows.hpp"
#include "train/layers/gat_conv.hpp"
#include "train/layers/layer_input.hpp"
#include "train/layers/remembered_dropout.hpp"

namespace halo::train {
namespace {

constexpr std::int64_t float_bytes = sizeof(float);

// The bytes alive through a sequence of allocations and releases, and their most.
class Footprint {
 public:
  void take(std::int64_t bytes) {
    live_ += bytes;
    peak_ = std::max(peak_, live_);
  }
  void give(std::int64_t bytes) { live_ -= bytes; }
  std::int64_t peak() const { return peak_; }

 private:
  std::int64_t live_ = 0;
  std::int64_t peak_ = 0;
};

}  // namespace

ModelShape::ModelShape(const ModelConfig& config, std::int64_t in_dim, std::int64_t num_classes,
                       const kernels::Device& device)
    : config_(config), in_dim_(in_dim), num_classes_(num_classes), device_(device) {
  HALO_EXPECTS(config.kind == "gcn" || config.kind == "sage" || config.kind == "gat",
               "Model: kind must be gcn, sage or gat, got '" + config.kind + "'");
  HALO_EXPECTS(config.kind != "gat" || (config.heads >= 1 && config.out_heads >= 1),
               "Model: gat needs at least one head per layer, got heads " + std::to_string(config.heads) +
                   " and out_heads " + std::to_string(config.out_heads));
  HALO_EXPECTS(config.layers >= 1, "Model: needs at least one layer, got " + std::to_string(config.layers));
  HALO_EXPECTS(config.layers == 1 || config.hidden > 0,
               "Model: hidden width must be positive, got " + std::to_string(config.hidden));
  HALO_EXPECTS(in_dim > 0 && num_classes > 0, "Model: input width and classes must be positive, got " +
                                                  std::to_string(in_dim) + " and " + std::to_string(num_classes));
  HALO_EXPECTS(config.activation_dtype == "f32" || config.activation_dtype == "bf16",
               "Model: activation dtype must be f32 or bf16, got '" + config.activation_dtype + "'");
  HALO_EXPECTS(config.weight_decay >= 0,
               "Model: weight decay must be non-negative, got " + std::to_string(config.weight_decay));
}

bool ModelShape::aggregates_first(int i) const {
  return !attention() && conv_aggregates_first(layer_in(i), layer_out(i));
}

bool ModelShape::recomputing_saves() const {
  for (int i = 0; i < layers(); ++i)
    if (aggregates_first(i) && !(i == 0 && config_.kind == "gcn" && config_.input_dropout > 0.0f)) return true;
  return false;
}

std::string ModelShape::recompute_for(bool short_of_memory) const {
  if (config_.recompute != "auto") return config_.recompute;
  return short_of_memory && recomputing_saves() ? "aggregation" : "none";
}

std::int64_t ModelShape::activation_bytes(std::int64_t vertices, std::int64_t halo_rows) const {
  return step_peak_bytes(vertices, halo_rows, false);
}

std::int64_t ModelShape::input_activation_bytes(std::int64_t vertices, std::int64_t halo_rows) const {
  return step_peak_bytes(vertices, halo_rows, false) - step_peak_bytes(vertices, halo_rows, true);
}

std::int64_t ModelShape::exchange_width() const {
  std::int64_t width = 0;
  for (int i = 0; i < layers(); ++i) {
    const std::int64_t heads = layer_heads(i);
    // GAT exchanges [x·W | source scores]; GCN and GraphSAGE aggregate the narrower side, and a
    // first layer whose features are streamed its output width.
    width = std::max(width, attention() ? heads * head_width(i) + heads
                            : aggregates_first(i) && i > 0 ? layer_in(i)
                                                           : layer_out(i));
  }
  return width;
}

// Mirrors a training step (train/detail/run_loop.cpp: forward, the loss's gradient, the logits let
// go, backward) through Model with GcnConv, SageConv, GatConv, BatchNorm, Dropout and Activation,
// and on a rank HaloAggregation and HaloAttentionGraph: a change to what they
// allocate or keep changes this walk too (the model tests compare it with the tensors' measured
// peak, the end-to-end bench with the ranks' resident sets).
std::int64_t ModelShape::step_peak_bytes(std::int64_t vertices, std::int64_t halo_rows, bool input_given) const {
  const auto rows = [&](std::int64_t width) { return vertices * width * float_bytes; };
  const auto bf16_rows = [&](std::int64_t width) { return kernels::Bf16Rows::bytes_for(vertices, width); };
  // The float32 scratch of a product reading a matrix by chunk (InputMatrix), alive while it runs.
  const auto widening = [&](std::int64_t width) { return resident_chunk_rows(vertices, width) * width * float_bytes; };
  // On a rank, an aggregation's input (or gradient) extended by the halo rows, alive while the
  // product is written.
  const auto local = [&](std::int64_t width) {
    return halo_rows < 0 ? 0 : (vertices + halo_rows) * width * float_bytes;
  };
  Footprint f;
  const auto aggregate = [&](std::int64_t width, std::int64_t result) {
    f.take(local(width));
    f.take(result);
    f.give(local(width));
  };
  const int last = layers() - 1;
  // Per layer, what forward keeps for backward (beside the output): a dropped copy of the input,
  // the conv's own tensors, batch norm's input and statistics.
  std::vector<std::int64_t> dropped(static_cast<std::size_t>(layers())), saved(dropped), norm(dropped);
  std::vector<std::int64_t> scratch(dropped.size());      // a product's chunk of x, when x is read by chunk
  std::vector<std::int64_t> masks(dropped.size());        // the bits of a dropout acting as x is read
  std::vector<std::int64_t> kept_output(dropped.size());  // the layer's output, float32 or bfloat16
  std::vector<bool> aggregated(dropped.size());  // the layer aggregated first
  // The layer multiplies a bfloat16 x (the previous output; a layer aggregating first never does).
  std::vector<bool> bf16_input(dropped.size());
  for (int i = 0; i <= last; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const std::int64_t in = layer_in(i), out = layer_out(i);
    const std::int64_t output = rows(out);
    const bool own_input = !(i == 0 && input_given);  // a resident x, not the pipeline's chunks
    // Every product reading x holds a float32 scratch chunk: x in bfloat16, or dropped as read.
    const bool by_chunk = bf16_input[k] || (own_input && drops_while_reading(i));
    scratch[k] = by_chunk ? widening(in) : 0;
    // A resident float32 x dropped as read keeps its mask as bits from the first read to backward's
    // last (remembered_dropout) on the CPU; a bfloat16 one, and any on a GPU, draws it on every read.
    if (own_input && drops_while_reading(i) && !bf16_input[k])
      f.take(masks[k] = remembered_dropout_bytes(vertices, in, device_));
    if (dropout(i) > 0.0f && !drops_in_place(i) && !drops_while_reading(i) && own_input) f.take(dropped[k] = rows(in));
    if (attention()) {
      const std::int64_t heads = layer_heads(i), heads_out = rows(heads * head_width(i));
      // x·W (its product reading x), the scores and the softmax statistics; on a rank also
      // [x·W | source scores] of every local row.
      f.take(rows(heads * head_width(i)));
      f.take(scratch[k]);
      f.give(scratch[k]);
      saved[k] = gat_saved_bytes(heads, head_width(i), vertices) + local(heads * head_width(i) + heads);
      f.take(saved[k] - rows(heads * head_width(i)));
      f.take(heads_out);
      if (i == last) {  // the heads' mean: the logits
        f.take(output);
        f.give(heads_out);
      }
      if (config_.residual) {  // x · W_res added into the output
        f.take(scratch[k]);
        f.give(scratch[k]);
      }
      if (recomputes_projection()) f.give(rows(heads * head_width(i) + 2 * heads));  // x·W and its scores
    } else if (aggregates_first(i) && !(i == 0 && input_given)) {
      aggregated[k] = true;
      aggregate(in, rows(in));  // Â·x
      f.take(output);
      if (recomputes_aggregation(i)) {
        f.give(rows(in));
      } else if (aggregation_in_bf16(i)) {
        f.take(saved[k] = bf16_rows(in));
        f.give(rows(in));
      } else {
        saved[k] = rows(in);
      }
    } else {  // h = x · W, then Â·h (a streamed first layer transforms first too)
      f.take(rows(out));
      f.take(scratch[k]);
      f.give(scratch[k]);
      aggregate(out, output);
      f.give(rows(out));
      if (config_.kind == "sage") {  // the root term x · W_r
        f.take(scratch[k]);
        f.give(scratch[k]);
      }
    }
    if (!reads_input_in_backward(i)) {  // the dropped input goes with the forward
      f.give(dropped[k]);
      dropped[k] = 0;
    }
    if (normalized(i)) f.take(norm[k] = rows(out) + 2 * out * float_bytes);  // its output and statistics
    kept_output[k] = output;
    if (output_in_bf16(i)) {  // the epilogue's output narrowed, then the float32 one goes
      f.take(kept_output[k] = bf16_rows(out));
      f.give(output);
      bf16_input[k + 1] = true;
    }
  }
  // The loss writes the logits' gradient, and the training step lets the logits go.
  f.take(rows(num_classes_));
  f.give(rows(num_classes_));
  for (int i = last; i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    const std::int64_t in = layer_in(i), out = layer_out(i);
    const std::int64_t grad = rows(out);  // the gradient of the layer's output
    if (i < last) {  // ReLU's or ELU's backward in place, then the output goes
      f.give(kept_output[k]);
      if (normalized(i)) {  // batch norm's input gradient replaces the output's
        f.take(rows(out));
        f.give(grad + norm[k]);
      }
    }
    const bool input_grad = i > 0;  // none for the features
    const std::int64_t grad_x = input_grad ? rows(in) : 0;
    const bool gcn = config_.kind == "gcn";  // GcnConv lets the output's gradient go first
    if (attention()) {
      const std::int64_t heads = layer_heads(i), heads_out = rows(heads * head_width(i));
      const std::int64_t head_grad = i == last ? heads_out : 0;  // the mean's gradient
      const std::int64_t sources = local(heads * head_width(i) + heads);  // every local row's gradients
      const std::int64_t grads = heads_out + rows(2 * heads);
      const std::int64_t workspace = rows(kernels::attention_workspace_width(heads, device_.is_cuda()));
      if (recomputes_projection()) {  // x·W (its product reading x) and its scores again
        f.take(rows(heads * head_width(i)));
        f.take(scratch[k]);
        f.give(scratch[k]);
        f.take(rows(2 * heads));
      }
      f.take(head_grad);
      f.take(sources);
      f.take(workspace);
      f.take(grads);
      f.give(workspace + head_grad + sources);
      const std::int64_t residual_grad = config_.residual ? grad : 0;  // the residual's backward reads it
      f.give(grad - residual_grad + saved[k]);
      f.take(scratch[k]);  // xᵀ · dh (and xᵀ · dy for the residual) in one pass over x
      f.give(scratch[k]);
      f.take(grad_x);
      f.give(grads + residual_grad);
    } else if (aggregated[k]) {  // (Â·x)ᵀ · g with Â·x kept or recomputed, then Âᵀ · (g · Wᵀ)
      if (recomputes_aggregation(i)) aggregate(in, rows(in));
      if (aggregation_in_bf16(i)) {  // (Â·x)ᵀ · g widened chunk by chunk
        f.take(widening(in));
        f.give(widening(in));
      }
      f.give(recomputes_aggregation(i) ? rows(in) : saved[k]);
      if (input_grad) {
        f.take(rows(in));
        if (gcn) f.give(grad);
        aggregate(in, grad_x);
        f.give(rows(in));
      }
      if (!gcn || !input_grad) f.give(grad);
    } else {  // Âᵀ·g, then · Wᵀ
      aggregate(out, rows(out));
      if (gcn) f.give(grad);
      f.take(scratch[k]);  // xᵀ · (Âᵀ·g) (GraphSAGE's with xᵀ · g) reading x
      f.give(scratch[k]);
      f.take(grad_x);
      f.give(rows(out));
      if (!gcn) f.give(grad);
    }
    f.give(dropped[k] + masks[k]);
  }
  return f.peak();
}

std::int64_t ModelShape::parameter_bytes() const {
  const std::int64_t weights_per_layer = config_.kind == "sage" ? 2 : 1;  // GraphSAGE: W_l and W_r
  std::int64_t floats = 0;
  for (int i = 0; i < layers(); ++i) {
    if (attention()) {  // W, and a_src and a_dst per head; W_res
      floats += (layer_in(i) + 2) * layer_heads(i) * head_width(i);
      if (config_.residual) floats += layer_in(i) * layer_out(i);
    }
    else
      floats += weights_per_layer * layer_in(i) * layer_out(i);
    if (has_bias(i)) floats += layer_out(i);
    if (normalized(i)) floats += 2 * layer_out(i);  // gamma and beta
  }
  return floats * float_bytes;
}

}  // namespace halo::train
