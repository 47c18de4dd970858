// Model: a stack of GNN layers (GCN, GraphSAGE or GAT) with dropout, optional batch norm and ReLU
// (ELU for GAT), built from a ModelConfig (kind gcn, sage or gat), with hand-written forward and
// backward.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/dist/communicator.hpp"
#include "train/layers/aggregation.hpp"
#include "train/layers/attention_graph.hpp"
#include "train/layers/layer_input.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/step.hpp"
#include "train/models/model_config.hpp"
#include "train/models/model_shape.hpp"

namespace halo::train {

// The graph operators a model needs, built once per dataset (or per part): the GCN-normalised
// adjacency D^-1/2 (A+I) D^-1/2, the mean aggregation D^-1 A and GAT's attention graph; and, for a part of a
// distributed run, the ranks holding the other parts (batch norm all-reduces its statistics over
// them; null for one process).
struct GraphOperators {
  std::unique_ptr<Aggregation> gcn;
  std::unique_ptr<Aggregation> mean;
  std::unique_ptr<AttentionGraph> attention;  // GAT's self-looped graph and its transpose
  dist::Communicator* communicator = nullptr;
};
// Builds what `kind` needs from the (raw) square graph, as LocalAggregations that multiply on
// `device` (on a GPU they hold the matrices there); O(E), plus the upload to a GPU.
GraphOperators build_graph_operators(const graph::CsrGraph& g, const std::string& kind,
                                     kernels::Device device = kernels::Device::cpu());

class Model {
 public:
  // Glorot-uniform weights and zero biases drawn from `seed` (identical on every rank), on
  // `device`. `operators` must outlive the model. Weight decay (Parameter::weight_decay): every
  // conv weight ("convI.weight", and GraphSAGE's "convI.root_weight") gets config.weight_decay,
  // or with weight_decay_first_layer_only only conv0's; biases and batch-norm parameters get 0.
  Model(const ModelConfig& config, std::int64_t in_dim, std::int64_t num_classes, std::uint64_t seed,
        GraphOperators& operators, kernels::Device device = kernels::Device::cpu());
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  // Logits (vertices x classes) for input features (vertices x in_dim). A training forward keeps
  // what backward needs, including a view of `features`, which must stay alive and unchanged
  // until backward; an evaluation forward (dropout off, batch norm on running statistics) keeps
  // nothing.
  kernels::Tensor forward(const kernels::Tensor& features, const Step& step);
  // The same for features given as the first layer's LayerInput: resident (exactly the overload
  // above), streamed through a FeaturePipeline (the input dropout then acts on each staged chunk
  // with the mask Dropout draws for the whole matrix, and the first layer streams its GEMMs), or
  // with the first aggregation precomputed (input dropout must then be 0). What the input's
  // handles point at must stay alive until backward. A first layer that aggregates a resident x
  // first (first_layer_aggregates_first()) transforms a streamed one first.
  kernels::Tensor forward(const LayerInput& features, const Step& step);
  // Accumulates every parameter's gradient from d loss / d logits of the last forward, which must
  // have been a training one (a forward in between, of either kind, replaces it), with that
  // forward's `step`; frees what the forward kept.
  void backward(kernels::Tensor grad_logits, const Step& step);

  std::vector<Parameter*> parameters();
  // Non-trainable state a checkpoint must keep: the batch norms' "bnI.running_mean" and
  // "bnI.running_var" (1 x hidden each); empty without batch norm.
  std::vector<std::pair<std::string, kernels::Tensor*>> buffers();
  void zero_grad();
  const ModelConfig& config() const;
  // The model's widths and byte counts (the memory plan's numbers, ModelShape says what each
  // counts), and the three counts of it.
  const ModelShape& shape() const;
  std::int64_t activation_bytes(std::int64_t vertices) const;
  std::int64_t input_activation_bytes(std::int64_t vertices) const;
  std::int64_t parameter_bytes() const;
  // True when the first layer computes (Â·x)·W (in_dim < out_dim), so it needs the features
  // whole or their aggregation precomputed.
  bool first_layer_aggregates_first() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace halo::train
