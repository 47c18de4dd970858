// ModelShape: the widths, parameters and activation bytes of a GCN / GraphSAGE stack.
#include "train/models/model_shape.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "train/layers/gat_conv.hpp"
#include "train/layers/layer_input.hpp"

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

ModelShape::ModelShape(const ModelConfig& config, std::int64_t in_dim, std::int64_t num_classes)
    : config_(config), in_dim_(in_dim), num_classes_(num_classes) {
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
  HALO_EXPECTS(config.weight_decay >= 0,
               "Model: weight decay must be non-negative, got " + std::to_string(config.weight_decay));
}

bool ModelShape::aggregates_first(int i) const {
  return !attention() && conv_aggregates_first(layer_in(i), layer_out(i));
}

bool ModelShape::any_aggregates_first() const {
  for (int i = 0; i < layers(); ++i)
    if (aggregates_first(i)) return true;
  return false;
}

std::int64_t ModelShape::activation_bytes(std::int64_t vertices) const { return step_peak_bytes(vertices, false); }

std::int64_t ModelShape::input_activation_bytes(std::int64_t vertices) const {
  return step_peak_bytes(vertices, false) - step_peak_bytes(vertices, true);
}

// Mirrors Model::forward and Model::backward with GcnConv, SageConv, GatConv, BatchNorm, Dropout
// and Activation: a change to what they allocate or keep changes this walk too (the model tests
// compare it with the tensors' measured peak).
std::int64_t ModelShape::step_peak_bytes(std::int64_t vertices, bool input_given) const {
  const auto rows = [&](std::int64_t width) { return vertices * width * float_bytes; };
  Footprint f;
  const int last = layers() - 1;
  // Per layer, what forward keeps for backward (beside the output): a dropped copy of the input,
  // the conv's own tensors, batch norm's input and statistics.
  std::vector<std::int64_t> dropped(static_cast<std::size_t>(layers())), saved(dropped), norm(dropped);
  std::vector<bool> aggregated(dropped.size());  // the layer aggregated first
  for (int i = 0; i <= last; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const std::int64_t in = layer_in(i), out = layer_out(i);
    const std::int64_t output = i == last ? 0 : rows(out);  // the last layer's output is the logits
    const float p = i == 0 ? config_.input_dropout : config_.dropout;
    if (p > 0.0f && !drops_in_place(i) && !(i == 0 && input_given)) f.take(dropped[k] = rows(in));
    if (attention()) {
      const std::int64_t heads_out = rows(layer_heads(i) * head_width(i));
      f.take(saved[k] = gat_saved_bytes(layer_heads(i), head_width(i), vertices));
      if (i == last) {  // the heads' outputs, then their mean (the logits)
        f.take(heads_out);
        f.give(heads_out);
      } else {
        f.take(output);
      }
    } else if (aggregates_first(i) && !(i == 0 && input_given)) {
      aggregated[k] = true;
      if (!recomputes_aggregation(i)) f.take(saved[k] = rows(in));  // Â·x
      f.take(output);
    } else {  // h = x · W, then Â·h (a streamed first layer transforms first too)
      f.take(rows(out));
      f.take(output);
      f.give(rows(out));
    }
    if (normalized(i)) f.take(norm[k] = rows(out) + 2 * out * float_bytes);  // its output and statistics
  }
  for (int i = last; i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    const std::int64_t in = layer_in(i), out = layer_out(i);
    std::int64_t grad = i == last ? 0 : rows(out);  // the gradient of the layer's output
    if (i < last) {  // ReLU's or ELU's backward in place, then the output goes
      f.give(rows(out));
      if (normalized(i)) {  // batch norm's input gradient replaces the output's
        f.take(rows(out));
        f.give(grad + norm[k]);
      }
    }
    const std::int64_t grad_x = i > 0 ? rows(in) : 0;  // none for the features
    if (attention()) {
      const std::int64_t heads_out = rows(layer_heads(i) * head_width(i));
      const std::int64_t head_grad = i == last ? heads_out : 0;  // the mean's gradient
      const std::int64_t grads = heads_out + rows(2 * layer_heads(i));
      const std::int64_t workspace = rows(4 * layer_heads(i));
      f.take(head_grad);
      f.take(grads);
      f.take(workspace);
      f.give(workspace + head_grad);
      const std::int64_t residual_grad = config_.residual ? grad : 0;  // the residual's backward reads it
      f.give(grad - residual_grad + saved[k]);
      f.take(grad_x);
      f.give(grads + residual_grad);
    } else if (aggregated[k]) {  // (Â·x)ᵀ · g with Â·x kept or recomputed, then Âᵀ · (g · Wᵀ)
      f.take(rows(in) - saved[k]);
      f.give(rows(in));
      f.take(grad_x);
      if (config_.kind == "gcn") f.give(grad);  // GcnConv lets the output's gradient go first
      f.take(grad_x);
      f.give(grad_x);
      if (config_.kind != "gcn") f.give(grad);
    } else {  // Âᵀ·g, then · Wᵀ
      f.take(rows(out));
      if (config_.kind == "gcn") f.give(grad);
      f.take(grad_x);
      f.give(rows(out));
      if (config_.kind != "gcn") f.give(grad);
    }
    f.give(dropped[k]);
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
