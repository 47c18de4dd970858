// RgcnModel: the layer stack of an R-GCN, its inputs (features or embedding tables), its forward
// pass keeping what backward needs, and its backward pass freeing it layer by layer.
#include "train/rgcn_model.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "graph/base/array.hpp"
#include "graph/base/error.hpp"
#include "train/activation.hpp"
#include "train/init.hpp"

namespace halo::train {

using kernels::ConstTensorView;
using kernels::Tensor;

namespace {

constexpr std::int64_t float_bytes = static_cast<std::int64_t>(sizeof(float));

// One layer: dropout on every type's input -> RgcnConv -> (unless last) ReLU per type, with the
// tensors a training forward keeps for backward.
struct Stage {
  Dropout dropout;
  std::unique_ptr<RgcnConv> conv;
  bool bases = false;
  std::vector<Relu> relus;      // per type; empty in the last layer
  std::vector<Tensor> dropped;  // per type: the dropout's output (when active), the conv's input
  std::vector<Tensor> out;      // per type: the ReLU's output, the next layer's input

  explicit Stage(Dropout d) : dropout(d) {}
};

void check_config(const RgcnModelConfig& c, std::int64_t num_classes) {
  HALO_EXPECTS(c.layers >= 1, "RgcnModel: needs at least one layer, got " + std::to_string(c.layers));
  HALO_EXPECTS(c.layers == 1 || c.hidden > 0,
               "RgcnModel: hidden width must be positive, got " + std::to_string(c.hidden));
  HALO_EXPECTS(num_classes > 0, "RgcnModel: num_classes must be positive, got " + std::to_string(num_classes));
  HALO_EXPECTS(c.num_bases >= 0, "RgcnModel: num_bases must be >= 0, got " + std::to_string(c.num_bases));
  HALO_EXPECTS(c.weight_decay >= 0 && c.embedding_weight_decay >= 0,
               "RgcnModel: weight decays must be non-negative, got " + std::to_string(c.weight_decay) + " and " +
                   std::to_string(c.embedding_weight_decay));
}

}  // namespace

struct RgcnModel::Impl {
  RgcnModelConfig config;
  const RgcnGraph* graph = nullptr;
  std::vector<const Tensor*> features;                  // per type; null where a table stands in
  std::vector<std::unique_ptr<EmbeddingTable>> tables;  // per type; null where features exist
  int target = 0;
  std::int64_t num_classes = 0;
  std::vector<Stage> stages;
  std::vector<Parameter*> parameters;
  Array<std::int64_t> global_ids;             // type offset + index, types one after another
  std::vector<std::int64_t> type_offsets{0};  // where each type's ids start
  bool backward_pending = false;

  int types() const { return graph->num_vertex_types(); }
  std::int64_t vertices(int t) const { return graph->num_vertices(t); }
  const Tensor& input(int t) const {
    const auto ts = static_cast<std::size_t>(t);
    return features[ts] != nullptr ? *features[ts] : tables[ts]->parameter().value;
  }
  std::int64_t input_width(int t) const { return input(t).cols(); }
  std::int64_t layer_out(std::size_t i) const {
    return i + 1 == static_cast<std::size_t>(config.layers) ? num_classes : config.hidden;
  }
  std::int64_t layer_in(std::size_t i, int t) const { return i == 0 ? input_width(t) : config.hidden; }
  // The step of one type's rows: the same key, the type's global ids.
  Step type_step(const Step& step, int t) const {
    Step s = step;
    s.global_ids = {global_ids.data() + type_offsets[static_cast<std::size_t>(t)], vertices(t)};
    return s;
  }
  void release_tape() {
    for (Stage& s : stages) {
      for (Tensor& x : s.dropped) x = Tensor();
      for (Tensor& x : s.out) x = Tensor();
    }
  }
};

RgcnModel::RgcnModel(const RgcnModelConfig& config, const RgcnGraph& graph, std::vector<const Tensor*> features,
                     int target_type, std::int64_t num_classes, std::uint64_t seed, kernels::Device device)
    : impl_(std::make_unique<Impl>()) {
  check_config(config, num_classes);
  Impl& m = *impl_;
  m.config = config;
  m.graph = &graph;
  m.features = std::move(features);
  m.target = target_type;
  m.num_classes = num_classes;
  const int types = graph.num_vertex_types();
  HALO_EXPECTS(static_cast<int>(m.features.size()) == types,
               "RgcnModel: expected one feature tensor (or nullptr) per vertex type (" + std::to_string(types) +
                   "), got " + std::to_string(m.features.size()));
  HALO_EXPECTS(target_type >= 0 && target_type < types, "RgcnModel: target type " + std::to_string(target_type) +
                                                            " is not one of the " + std::to_string(types) +
                                                            " vertex types");

  m.tables.resize(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    const Tensor* x = m.features[static_cast<std::size_t>(t)];
    const std::string& name = graph.vertex_type_name(t);
    if (x != nullptr) {
      HALO_EXPECTS(x->rows() == graph.num_vertices(t) && x->cols() > 0,
                   "RgcnModel: features of type " + name + " are " + std::to_string(x->rows()) + " x " +
                       std::to_string(x->cols()) + ", expected " + std::to_string(graph.num_vertices(t)) +
                       " rows and at least one column");
      HALO_EXPECTS(x->device() == device, "RgcnModel: features of type " + name + " are on " +
                                              x->device().to_string() + ", the model on " + device.to_string());
      continue;
    }
    HALO_EXPECTS(config.embedding_dim > 0, "RgcnModel: type " + name + " has no features and embedding_dim is " +
                                               std::to_string(config.embedding_dim) + " (must be positive)");
    if (device.is_cuda())
      throw UnsupportedError("RgcnModel: type " + name + " needs an embedding table, which lives in host memory; " +
                             "feeding tables to a model on " + device.to_string() +
                             " comes with the CUDA R-GCN (issue #8)");
    m.tables[static_cast<std::size_t>(t)] = std::make_unique<EmbeddingTable>(
        "embedding." + name, graph.num_vertices(t), config.embedding_dim, config.embedding_weight_decay);
  }

  const auto layers = static_cast<std::size_t>(config.layers);
  for (std::size_t i = 0; i < layers; ++i) {
    m.stages.emplace_back(Dropout(i == 0 ? config.input_dropout : config.dropout, static_cast<std::uint32_t>(i)));
    Stage& s = m.stages.back();
    std::vector<std::int64_t> in_dims;
    for (int t = 0; t < types; ++t) in_dims.push_back(m.layer_in(i, t));
    // Bases need one input width over all relations; a layer where the widths differ keeps
    // one weight per relation.
    bool same_width = graph.num_relations() > 0;
    for (int r = 0; r < graph.num_relations(); ++r)
      same_width = same_width && in_dims[static_cast<std::size_t>(graph.relation_src(r))] ==
                                     in_dims[static_cast<std::size_t>(graph.relation_src(0))];
    s.bases = config.num_bases > 0 && same_width;
    s.conv = std::make_unique<RgcnConv>(graph, in_dims, m.layer_out(i), s.bases ? config.num_bases : 0, config.bias,
                                        "conv" + std::to_string(i), device);
    // The first layer's inputs need a gradient only where they are a table.
    if (i == 0)
      for (int t = 0; t < types; ++t) s.conv->set_input_grad(t, m.tables[static_cast<std::size_t>(t)] != nullptr);
    if (i + 1 < layers) s.relus.resize(static_cast<std::size_t>(types));
    s.dropped.resize(static_cast<std::size_t>(types));
    s.out.resize(static_cast<std::size_t>(types));
  }

  std::uint64_t index = 0;  // the tensor's position in parameters(): its initialisation stream
  for (Stage& s : m.stages) {
    std::set<const Parameter*> biases;
    for (int t = 0; t < types; ++t)
      if (const Parameter* b = s.conv->bias(t)) biases.insert(b);
    for (Parameter* p : s.conv->parameters()) {
      if (biases.count(p) == 0) {
        glorot_uniform(p->value, seed, index);
        p->weight_decay = config.weight_decay;
      }
      m.parameters.push_back(p);
      ++index;
    }
  }
  for (auto& table : m.tables)
    if (table) glorot_uniform(table->parameter().value, seed, index++);

  for (int t = 0; t < types; ++t) m.type_offsets.push_back(m.type_offsets.back() + graph.num_vertices(t));
  m.global_ids = Array<std::int64_t>::vector(m.type_offsets.back());
  for (std::int64_t i = 0; i < m.global_ids.size(); ++i) m.global_ids[i] = i;
}

RgcnModel::~RgcnModel() = default;
RgcnModel::RgcnModel(RgcnModel&&) noexcept = default;
RgcnModel& RgcnModel::operator=(RgcnModel&&) noexcept = default;

Tensor RgcnModel::forward(const Step& step) {
  Impl& m = *impl_;
  HALO_EXPECTS(step.global_ids.data == nullptr,
               "RgcnModel: step.global_ids must be empty (the model numbers the vertices of all types itself), got " +
                   std::to_string(step.global_ids.size) + " ids");
  m.backward_pending = false;
  m.release_tape();
  const int types = m.types();
  std::vector<const Tensor*> x;
  for (int t = 0; t < types; ++t) x.push_back(&m.input(t));
  Tensor logits;
  for (std::size_t i = 0; i < m.stages.size(); ++i) {
    Stage& s = m.stages[i];
    std::vector<ConstTensorView> in;
    for (int t = 0; t < types; ++t) {
      const auto ts = static_cast<std::size_t>(t);
      if (s.dropout.active(step)) {
        s.dropped[ts] = s.dropout.forward(*x[ts], m.type_step(step, t));
        in.push_back(s.dropped[ts].view());
      } else {
        in.push_back(x[ts]->view());
      }
    }
    std::vector<Tensor> y = s.conv->forward(in, step);
    if (!step.training) {  // nothing will look back: keep only the newest activations
      for (Tensor& d : s.dropped) d = Tensor();
      if (i > 0)
        for (Tensor& o : m.stages[i - 1].out) o = Tensor();
    }
    if (i + 1 == m.stages.size()) {
      logits = std::move(y[static_cast<std::size_t>(m.target)]);
      break;
    }
    for (int t = 0; t < types; ++t) {
      const auto ts = static_cast<std::size_t>(t);
      s.out[ts] = s.relus[ts].forward(std::move(y[ts]), step);
      x[ts] = &s.out[ts];
    }
  }
  if (!step.training) m.release_tape();
  m.backward_pending = step.training;
  return logits;
}

void RgcnModel::backward(Tensor grad_logits, const Step& step) {
  Impl& m = *impl_;
  HALO_EXPECTS(m.backward_pending, "RgcnModel: backward needs a training forward before it");
  const std::int64_t rows = m.vertices(m.target);
  HALO_EXPECTS(grad_logits.rows() == rows && grad_logits.cols() == m.num_classes,
               "RgcnModel: the logits' gradient is " + std::to_string(grad_logits.rows()) + " x " +
                   std::to_string(grad_logits.cols()) + ", expected " + std::to_string(rows) + " x " +
                   std::to_string(m.num_classes));
  m.backward_pending = false;
  const int types = m.types();
  const kernels::Device device = grad_logits.device();
  // Only the target's logits reach the loss: the last layer's other outputs get zero gradients.
  std::vector<Tensor> g(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t)
    g[static_cast<std::size_t>(t)] =
        t == m.target ? std::move(grad_logits) : Tensor::zeros(m.vertices(t), m.num_classes, device);
  for (std::size_t i = m.stages.size(); i-- > 0;) {
    Stage& s = m.stages[i];
    if (i + 1 < m.stages.size()) {
      for (int t = 0; t < types; ++t) {
        const auto ts = static_cast<std::size_t>(t);
        g[ts] = s.relus[ts].backward(std::move(g[ts]));
        s.out[ts] = Tensor();  // the next layer, the only other reader, is done
      }
    }
    g = s.conv->backward(std::move(g), step);
    for (int t = 0; t < types; ++t) {
      const auto ts = static_cast<std::size_t>(t);
      s.dropped[ts] = Tensor();
      if (!s.conv->input_grad(t)) continue;
      g[ts] = s.dropout.backward(std::move(g[ts]), m.type_step(step, t));
      if (i == 0) m.tables[ts]->accumulate_grad(g[ts].view());
    }
  }
}

std::vector<Parameter*> RgcnModel::parameters() { return impl_->parameters; }

std::vector<std::pair<std::string, Tensor*>> RgcnModel::buffers() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (auto& table : impl_->tables) {
    if (!table) continue;
    out.emplace_back(table->parameter().name, &table->parameter().value);
    for (auto& state : table->state()) out.push_back(state);
  }
  return out;
}

void RgcnModel::zero_grad() {
  for (Parameter* p : impl_->parameters) p->grad.fill(0.0f);
  for (auto& table : impl_->tables)
    if (table) table->zero_grad();
}

void RgcnModel::sparse_step(const OptimizerConfig& config) {
  for (auto& table : impl_->tables)
    if (table) table->step(config);
}

const RgcnModelConfig& RgcnModel::config() const { return impl_->config; }
int RgcnModel::target_type() const { return impl_->target; }
std::int64_t RgcnModel::num_classes() const { return impl_->num_classes; }
int RgcnModel::num_layers() const { return static_cast<int>(impl_->stages.size()); }

EmbeddingTable* RgcnModel::embedding(int type) {
  HALO_EXPECTS(type >= 0 && type < impl_->types(), "RgcnModel: no vertex type " + std::to_string(type) +
                                                       " (there are " + std::to_string(impl_->types()) + ")");
  return impl_->tables[static_cast<std::size_t>(type)].get();
}

bool RgcnModel::uses_bases(int layer) const { return impl_->stages.at(static_cast<std::size_t>(layer)).bases; }

std::int64_t RgcnModel::activation_bytes() const {
  const Impl& m = *impl_;
  const int types = m.types();
  std::int64_t kept = 0;
  std::int64_t busiest = 0;  // the most one layer holds at once besides what is kept
  for (std::size_t i = 0; i < m.stages.size(); ++i) {
    const Stage& s = m.stages[i];
    std::int64_t inputs = 0, input_grads = 0, outputs = 0;
    for (int t = 0; t < types; ++t) {
      const std::int64_t in = m.vertices(t) * m.layer_in(i, t) * float_bytes;
      inputs += in;
      if (s.conv->input_grad(t)) input_grads += in;
      outputs += m.vertices(t) * m.layer_out(i) * float_bytes;
    }
    if (s.dropout.p() > 0.0f) kept += inputs;
    kept += s.conv->saved_bytes();
    if (i + 1 < m.stages.size()) kept += outputs;  // the ReLU outputs
    // Backward holds the outputs' gradients, H's gradient, the input gradients and, with bases,
    // the composed weights' gradient; forward holds less (H and the outputs).
    busiest = std::max(busiest, outputs + s.conv->workspace_bytes() + input_grads + s.conv->saved_bytes());
  }
  return kept + busiest;
}

std::int64_t RgcnModel::parameter_bytes() const {
  std::int64_t bytes = 0;
  for (const Parameter* p : impl_->parameters) bytes += static_cast<std::int64_t>(p->value.bytes());
  return bytes;
}

std::int64_t RgcnModel::host_bytes() const {
  const Impl& m = *impl_;
  std::int64_t bytes = static_cast<std::int64_t>(m.global_ids.bytes());
  for (const auto& table : m.tables)
    if (table)
      bytes += table->rows() * (4 * table->dim() * float_bytes + static_cast<std::int64_t>(sizeof(std::int64_t)) + 1);
  return bytes;
}

}  // namespace halo::train
