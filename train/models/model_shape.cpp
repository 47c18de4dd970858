// ModelShape: the widths, parameters and activation bytes of a GCN / GraphSAGE stack.
#include "train/models/model_shape.hpp"

#include <algorithm>
#include <string>

#include "graph/base/error.hpp"
#include "train/layers/gat_conv.hpp"
#include "train/layers/layer_input.hpp"

namespace halo::train {
namespace {

constexpr std::int64_t float_bytes = sizeof(float);

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

std::int64_t ModelShape::conv_saved(int i, std::int64_t vertices) const {
  if (attention()) return gat_saved_bytes(layer_heads(i), head_width(i), vertices);
  return conv_saved_bytes(layer_in(i), layer_out(i), vertices);
}

std::int64_t ModelShape::activation_bytes(std::int64_t vertices) const {
  const auto rows = [&](std::int64_t width) { return vertices * width * float_bytes; };
  std::int64_t kept = 0;
  std::int64_t widest_gradient = num_classes_;
  std::int64_t attention_backward = 0;
  for (int i = 0; i < layers(); ++i) {
    const float p = i == 0 ? config_.input_dropout : config_.dropout;
    if (p > 0.0f) kept += rows(layer_in(i));
    kept += conv_saved(i, vertices);
    if (i + 1 < layers()) kept += rows(layer_out(i));  // the activation's output
    widest_gradient = std::max(widest_gradient, std::max(layer_out(i), layer_heads(i) * head_width(i)));
    // GAT's backward also holds both scores' gradients and the attention kernel's workspace
    // (kernels/attention.hpp: 4 H floats per row on the CPU, H on a GPU): 6 H per row at most.
    if (attention()) attention_backward = std::max(attention_backward, rows(6 * layer_heads(i)));
    // The conv's output (batch norm's input) and the statistics it keeps.
    if (normalized(i)) kept += rows(layer_out(i)) + 2 * layer_out(i) * float_bytes;
  }
  // Backward holds at most the incoming gradient, one temporary and the outgoing gradient at once.
  return kept + 3 * rows(widest_gradient) + attention_backward;
}

std::int64_t ModelShape::input_activation_bytes(std::int64_t vertices) const {
  const std::int64_t dropped = config_.input_dropout > 0.0f ? vertices * in_dim_ * float_bytes : 0;
  return dropped + (attention() ? 0 : conv_saved(0, vertices));
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
