// Model: the layer stack of a GCN or GraphSAGE network, its forward pass (keeping what backward
// needs) and its backward pass (freeing it again, layer by layer).
#include "train/models/model.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/bf16_rows.hpp"
#include "train/layers/activation.hpp"
#include "train/layers/batch_norm.hpp"
#include "train/layers/gat_conv.hpp"
#include "train/layers/gcn_conv.hpp"
#include "train/layers/init.hpp"
#include "train/layers/remembered_dropout.hpp"
#include "train/layers/sage_conv.hpp"
#include "train/models/model_shape.hpp"

namespace halo::train {

using kernels::Tensor;

namespace {

// One layer of the stack: dropout -> conv -> (unless last) [batch norm] -> ReLU or ELU, with the tensors
// a training forward keeps for backward.
struct Stage {
  Dropout dropout;
  std::unique_ptr<GraphConv> conv;
  std::unique_ptr<BatchNorm> norm;  // null without batch norm and in the last layer
  Activation activation;   // GAT's ELU; a ReLU stage is `fused`
  // A hidden ReLU stage ends in one pass (bias_relu_dropout): the bias (in the conv's epilogue,
  // or batch norm's output), ReLU, and the next stage's dropout in place, `next_dropout`.
  bool fused = false;
  const Dropout* next_dropout = nullptr;
  Tensor dropped;   // the dropout's output when active and not in place: the conv's input
  Tensor conv_out;  // the conv's output when batch norm follows (its input)
  Tensor out;       // the activation's output: the stage's output and the next stage's input
  kernels::Bf16Rows out_bf16;  // `out` kept in bfloat16 instead (ModelShape::output_in_bf16)

  Stage(Dropout d, ActivationKind kind) : dropout(d), activation(kind) {}
};

// x with the dropout of `d` applied as the layer reads it chunk by chunk: the mask Dropout::forward
// draws, keyed on (seed, epoch, layer, global id).
InputMatrix dropped_as_read(const InputMatrix& x, const Dropout& d, const Step& step) {
  return dropped_as_read(x, d.p(), d.key(step), step.global_ids);
}

// The first stage's input: the features after the input dropout. Streamed features, and resident
// ones when the first layer transforms first (`by_chunk`, ModelShape::drops_while_reading), get
// the dropout as a per-chunk transform, so no dropped copy exists; otherwise they are dropped
// into a new tensor, kept for backward like every stage's dropout output.
LayerInput first_stage_input(Stage& s, const LayerInput& features, bool by_chunk, const Step& step) {
  if (!s.dropout.active(step)) return features;
  HALO_EXPECTS(!features.precomputed(), "Model: the input dropout would act on features whose aggregation Â·x was "
                                        "precomputed without it; precompute only with input dropout 0");
  LayerInput in = features;
  if (features.x.streamed() || by_chunk) {
    in.x = dropped_as_read(features.x, s.dropout, step);
  } else {
    s.dropped = s.dropout.forward(features.x.tensor("Model: the input dropout"), step);
    in.x = InputMatrix(s.dropped);
  }
  return in;
}

// The conv weights ("convI.weight", "convI.root_weight"), as opposed to biases and batch-norm
// parameters.
bool is_weight(const Parameter& p) {
  const std::string suffix = "weight";
  return p.name.size() >= suffix.size() && p.name.compare(p.name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// GAT's attention vectors ("convI.att_src", "convI.att_dst"): initialised and decayed as the
// weights are (the GAT paper's L2 covers every kernel, biases excepted).
bool is_attention_vector(const Parameter& p) { return p.name.find(".att_") != std::string::npos; }

}  // namespace

struct Model::Impl {
  ModelShape shape;
  std::int64_t in_dim = 0;
  std::int64_t num_classes = 0;
  std::vector<Stage> stages;
  std::vector<Parameter*> parameters;
  bool backward_pending = false;  // a training forward has kept its tensors for backward

  explicit Impl(ModelShape s) : shape(std::move(s)), in_dim(shape.in_dim()), num_classes(shape.num_classes()) {}
  void release_tape() {
    for (Stage& s : stages) {
      s.dropped = Tensor();
      s.conv_out = Tensor();
      s.out = Tensor();
      s.out_bf16 = kernels::Bf16Rows();
    }
  }
};

// Weight decay groups: every conv weight (GraphSAGE: W_l and W_r; GAT: W and its attention
// vectors) decays with config.weight_decay,
// or, with weight_decay_first_layer_only (Kipf & Welling's recipe), only layer 0's. Biases and
// batch-norm parameters never decay, the usual no-decay group. (tkipf/gcn has no biases; PyG's
// GCN example puts all of conv1's parameters in its decayed group, so it decays conv1's bias too.)
Model::Model(const ModelConfig& config, std::int64_t in_dim, std::int64_t num_classes, std::uint64_t seed,
             GraphOperators& operators, kernels::Device device)
    : impl_(std::make_unique<Impl>(ModelShape(config, in_dim, num_classes, device))) {
  const bool attention = config.kind == "gat";
  Aggregation* aggregation = config.kind == "gcn" ? operators.gcn.get() : operators.mean.get();
  HALO_EXPECTS(attention ? operators.attention != nullptr : aggregation != nullptr,
               "Model: the graph operators lack the " +
                   std::string(attention ? "attention graph" : config.kind == "gcn" ? "GCN aggregation" : "mean aggregation") +
                   " a " + config.kind + " model needs");
  Impl& m = *impl_;
  const ModelShape& shape = m.shape;
  for (int i = 0; i < shape.layers(); ++i) {
    m.stages.emplace_back(Dropout(i == 0 ? config.input_dropout : config.dropout, static_cast<std::uint32_t>(i)),
                          attention ? ActivationKind::elu : ActivationKind::relu);
    Stage& s = m.stages.back();
    const std::string name = "conv" + std::to_string(i);
    if (attention) {
      GatConvOptions o;
      o.heads = shape.layer_heads(i);
      o.out_per_head = shape.head_width(i);
      o.concat = i + 1 < shape.layers();  // hidden layers concatenate their heads, the last averages them
      o.bias = shape.has_bias(i);
      o.negative_slope = config.negative_slope;
      o.attention_dropout = config.attention_dropout;
      o.residual = config.residual;
      o.layer = static_cast<std::uint32_t>(i);
      auto gat = std::make_unique<GatConv>(*operators.attention, shape.layer_in(i), o, name, device);
      gat->set_recompute_projection(shape.recomputes_projection());
      s.conv = std::move(gat);
    } else if (config.kind == "gcn") {
      s.conv = std::make_unique<GcnConv>(*aggregation, shape.layer_in(i), shape.layer_out(i), shape.has_bias(i), name,
                                         device);
    } else {
      s.conv = std::make_unique<SageConv>(*aggregation, shape.layer_in(i), shape.layer_out(i), shape.has_bias(i), name,
                                          device);
    }
    // The first layer's input is the features: nobody needs their gradient.
    s.conv->set_input_grad(i > 0);
    s.conv->set_recompute_aggregation(shape.recomputes_aggregation(i));
    s.conv->set_keep_aggregation_bf16(shape.aggregation_in_bf16(i));
    if (shape.normalized(i))
      s.norm = std::make_unique<BatchNorm>(shape.layer_out(i), "bn" + std::to_string(i), device, operators.communicator);
  }
  // The next stage's dropout acts in place on this stage's ReLU output (ModelShape::drops_in_place),
  // so that one tensor is both the next conv's input and what ReLU's backward reads: a dropped
  // entry has a zero gradient either way, and a kept one is the output times 1 / (1 - p) >= 1,
  // positive exactly where the output is, so ReLU's backward is bitwise that of the undropped
  // output and needs no mask. (ELU's derivative needs the value itself: GAT's stages keep a
  // dropped copy.)
  for (std::size_t i = 0; i + 1 < m.stages.size(); ++i) {
    Stage& s = m.stages[i];
    if (attention) continue;
    s.fused = true;
    if (shape.drops_in_place(static_cast<int>(i + 1))) s.next_dropout = &m.stages[i + 1].dropout;
    if (!s.norm) s.conv->set_relu_epilogue(s.next_dropout);
  }
  std::uint64_t index = 0;  // the parameter's position in parameters(): its initialisation stream
  for (std::size_t i = 0; i < m.stages.size(); ++i) {
    Stage& s = m.stages[i];
    for (Parameter* p : s.conv->parameters()) {
      if (is_weight(*p) || is_attention_vector(*p)) {
        glorot_uniform(p->value, seed, index);
        if (i == 0 || !config.weight_decay_first_layer_only) p->weight_decay = config.weight_decay;
      }
      m.parameters.push_back(p);
      ++index;
    }
    if (s.norm)
      for (Parameter* p : s.norm->parameters()) {
        m.parameters.push_back(p);
        ++index;
      }
  }
}

Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

Tensor Model::forward(const Tensor& features, const Step& step) { return forward(LayerInput(features), step); }

Tensor Model::forward(const LayerInput& features, const Step& step) {
  Impl& m = *impl_;
  HALO_EXPECTS(features.cols() == m.in_dim, "Model: features have " + std::to_string(features.cols()) +
                                                " columns, the model takes " + std::to_string(m.in_dim));
  m.backward_pending = false;
  m.release_tape();
  const Tensor* x = nullptr;                  // the input of stages after the first, in float32 ...
  const kernels::Bf16Rows* x_bf16 = nullptr;  // ... or in bfloat16
  Tensor logits;
  for (std::size_t i = 0; i < m.stages.size(); ++i) {
    Stage& s = m.stages[i];
    const int layer = static_cast<int>(i);
    Tensor y;
    if (i == 0) {
      y = s.conv->forward(first_stage_input(s, features, m.shape.drops_while_reading(layer), step), step);
    } else if (x_bf16 != nullptr || m.shape.drops_while_reading(layer)) {  // x read chunk by chunk
      InputMatrix in = x_bf16 != nullptr ? InputMatrix(*x_bf16) : InputMatrix(*x);
      // (A ReLU stage's output was dropped in place by its epilogue.)
      if (!m.shape.drops_in_place(layer) && s.dropout.active(step)) in = dropped_as_read(in, s.dropout, step);
      y = s.conv->forward(LayerInput(in, InputMatrix()), step);
    } else {
      // In place, the previous stage's epilogue has dropped its output already.
      if (!m.shape.drops_in_place(layer) && s.dropout.active(step)) {
        s.dropped = s.dropout.forward(*x, step);
        x = &s.dropped;
      }
      y = s.conv->forward(*x, step);
    }
    if (!step.training || !m.shape.reads_input_in_backward(layer)) {  // nobody will read the dropped input
      s.dropped = Tensor();
    }
    if (!step.training && i > 0) {  // nothing will look back: keep only the newest activation
      m.stages[i - 1].out = Tensor();
      m.stages[i - 1].out_bf16 = kernels::Bf16Rows();
    }
    if (i + 1 == m.stages.size()) {
      logits = std::move(y);
      break;
    }
    if (s.norm) {
      s.conv_out = std::move(y);
      y = s.norm->forward(s.conv_out, step);
      if (!step.training) s.conv_out = Tensor();
      if (s.fused) bias_relu_dropout(y, {}, s.next_dropout, step);
    }
    s.out = s.fused ? std::move(y) : s.activation.forward(std::move(y), step);
    x = &s.out;
    x_bf16 = nullptr;
    // An evaluation forward narrows too: the same function, and its own peak stays below the step's.
    if (m.shape.output_in_bf16(layer)) {
      s.out_bf16 = kernels::Bf16Rows::narrow(s.out.view());
      s.out = Tensor();
      x_bf16 = &s.out_bf16;
    }
  }
  if (!step.training) m.release_tape();
  m.backward_pending = step.training;
  return logits;
}

void Model::backward(Tensor grad_logits, const Step& step) {
  Impl& m = *impl_;
  HALO_EXPECTS(m.backward_pending, "Model: backward needs a training forward before it");
  HALO_EXPECTS(grad_logits.cols() == m.num_classes,
               "Model: the logits' gradient has " + std::to_string(grad_logits.cols()) + " columns, expected " +
                   std::to_string(m.num_classes));
  m.backward_pending = false;
  Tensor g = std::move(grad_logits);
  for (std::size_t i = m.stages.size(); i-- > 0;) {
    Stage& s = m.stages[i];
    if (i + 1 < m.stages.size()) {
      if (!s.out_bf16.empty() && s.fused)
        g = relu_dropout_backward(std::move(g), s.out_bf16.view(), s.next_dropout, step);
      else if (!s.out_bf16.empty())
        g = s.activation.backward(std::move(g), s.out_bf16.view());
      else if (s.fused)
        g = relu_dropout_backward(std::move(g), s.out.view(), s.next_dropout, step);
      else
        g = s.activation.backward(std::move(g));
      s.out = Tensor();  // the next stage, the only other reader, is done
      s.out_bf16 = kernels::Bf16Rows();
      if (s.norm) {
        g = s.norm->backward(std::move(g), step);
        s.conv_out = Tensor();
      }
    }
    g = s.conv->backward(std::move(g), step);
    s.dropped = Tensor();
    if (i > 0 && !m.shape.drops_in_place(static_cast<int>(i))) g = s.dropout.backward(std::move(g), step);
  }
}

std::vector<Parameter*> Model::parameters() { return impl_->parameters; }

std::vector<std::pair<std::string, Tensor*>> Model::buffers() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (Stage& s : impl_->stages)
    if (s.norm)
      for (auto& buffer : s.norm->buffers()) out.push_back(buffer);
  return out;
}

void Model::zero_grad() {
  for (Parameter* p : impl_->parameters) p->grad.fill(0.0f);
}

const ModelConfig& Model::config() const { return impl_->shape.config(); }

const ModelShape& Model::shape() const { return impl_->shape; }

std::int64_t Model::activation_bytes(std::int64_t vertices) const { return impl_->shape.activation_bytes(vertices); }

std::int64_t Model::input_activation_bytes(std::int64_t vertices) const {
  return impl_->shape.input_activation_bytes(vertices);
}

bool Model::first_layer_aggregates_first() const { return impl_->stages.front().conv->aggregates_first(); }

std::int64_t Model::parameter_bytes() const { return impl_->shape.parameter_bytes(); }

}  // namespace halo::train
