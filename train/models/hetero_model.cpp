// HeteroModel: the layer stack of an R-GCN or HGT, its inputs (features or embedding tables), its forward
// pass keeping what backward needs, and its backward pass freeing it layer by layer.
#include "train/models/hetero_model.hpp"

#include <algorithm>
#include <optional>
#include <utility>
#include <variant>

#include "graph/base/array.hpp"
#include "graph/base/error.hpp"
#include "kernels/dropout.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/tensor.hpp"
#include "train/dist/halo_exchange.hpp"
#include "train/features/feature_pipeline.hpp"
#include "train/features/feature_source.hpp"
#include "train/layers/activation.hpp"
#include "train/layers/hgt_conv.hpp"
#include "train/layers/init.hpp"
#include "train/layers/remembered_dropout.hpp"
#include "train/layers/rgat_conv.hpp"
#include "train/layers/typed_linear.hpp"

namespace halo::train {

using kernels::ConstTensorView;
using kernels::Tensor;

namespace {

constexpr std::int64_t float_bytes = static_cast<std::int64_t>(sizeof(float));

// One layer: dropout on every input it reads -> the layer -> ReLU per output type where the
// kind puts one, with the tensors a training forward keeps for backward.
struct Stage {
  Dropout dropout;
  std::unique_ptr<HeteroLayer> conv;
  bool relu = false;
  bool bases = false;
  std::vector<Tensor> dropped;  // per type: the dropout's output (when active), the layer's input
  // Per output type (not in the last layer): its output (after the ReLU) in its first rows, the
  // halo rows after them: the next layer's input.
  std::vector<Tensor> out;

  explicit Stage(Dropout d) : dropout(d) {}
};

// The layer a stage layout describes.
std::unique_ptr<HeteroLayer> make_layer(const RgcnGraph& graph, const HeteroStageLayout& stage,
                                        kernels::Device device) {
  if (const auto* linear = std::get_if<TypedLinearLayout>(&stage.layer))
    return std::make_unique<TypedLinear>(graph, *linear, stage.name, device);
  if (const auto* hgt = std::get_if<HgtConvLayout>(&stage.layer))
    return std::make_unique<HgtConv>(graph, *hgt, stage.name, device);
  if (const auto* rgat = std::get_if<RgatConvLayout>(&stage.layer))
    return std::make_unique<RgatConv>(graph, *rgat, stage.name, device);
  return std::make_unique<RgcnConv>(graph, std::get<RgcnConvLayout>(stage.layer), stage.name, device);
}

}  // namespace

struct HeteroModel::Impl {
  HeteroModelConfig config;
  std::optional<HeteroModelLayout> layout;
  const RgcnGraph* graph = nullptr;
  std::vector<const Tensor*> features;                  // per type; null where a table stands in
  std::vector<const kernels::Bf16Rows*> bf16_features;  // per type, or empty: features kept in bfloat16
  std::vector<std::unique_ptr<EmbeddingTable>> tables;  // per type; null where features exist
  int target = 0;
  std::int64_t num_classes = 0;
  kernels::Device device;
  std::vector<Stage> stages;
  std::vector<Parameter*> parameters;
  std::vector<dist::HaloExchange*> exchanges;  // per type; null without halo rows
  Array<std::int64_t> own_ids;                 // single process: type offset + index, all types
  std::vector<kernels::IndexView> global_ids;  // per type: the global id of each input row
  std::vector<Tensor> table_inputs;            // per table type with halo rows: owned rows + halo rows
  // Streamed tables (config.table_stream_budget > 0), per type: the source reading the host
  // table's rows, its pipeline on the model's device, and a host chunk for gradients coming back
  // from a GPU.
  std::vector<std::unique_ptr<FeatureSource>> table_sources;
  std::vector<std::unique_ptr<FeaturePipeline>> table_pipelines;
  Tensor host_gradient_chunk;
  bool backward_pending = false;

  int types() const { return graph->num_vertex_types(); }
  bool streamed(int t) const { return layout->streams(t); }
  const kernels::Bf16Rows* bf16(int t) const {
    return bf16_features.empty() ? nullptr : bf16_features[static_cast<std::size_t>(t)];
  }
  void stream_tables();
  // Adds a streamed table's gradient rows [first_row, first_row + rows.rows) (on the model's
  // device), after the input dropout's backward when it was active.
  void add_table_gradient(int t, kernels::TensorView rows, std::int64_t first_row, const Step& step);
  std::int64_t outputs(int t) const { return graph->num_outputs(t); }
  std::int64_t inputs(int t) const { return graph->num_inputs(t); }
  dist::HaloExchange* exchange(int t) const { return exchanges.empty() ? nullptr : exchanges[static_cast<std::size_t>(t)]; }
  // The step of one type's input rows: the same key, the rows' global ids.
  Step type_step(const Step& step, int t) const {
    Step s = step;
    s.global_ids = global_ids[static_cast<std::size_t>(t)];
    return s;
  }
  // The first layer's input of type t: its features, its table, or (a table with halo rows) the
  // table's rows followed by the halo rows, exchanged now.
  const Tensor* first_input(int t) {
    const auto ts = static_cast<std::size_t>(t);
    if (features[ts] != nullptr) return features[ts];
    const Tensor& table = tables[ts]->parameter().value;
    if (exchange(t) == nullptr) return &table;
    Tensor& x = table_inputs[ts];
    if (x.empty()) x = Tensor::empty(inputs(t), table.cols(), table.device());
    kernels::copy(table.view(), x.view().slice_rows(0, outputs(t)));
    fill_halo(t, x);
    return &x;
  }
  void fill_halo(int t, Tensor& x) const;
  // The gradient of type t's output rows from that of its input rows: the halo rows' gradients
  // are sent to their owners and added into theirs (the owners' share of the exchange).
  Tensor owned_gradient(int t, Tensor grad) const;
  void release_tape() {
    for (Stage& s : stages) {
      for (Tensor& x : s.dropped) x = Tensor();
      for (Tensor& x : s.out) x = Tensor();
    }
  }
};

void HeteroModel::Impl::stream_tables() {
  table_sources.resize(static_cast<std::size_t>(types()));
  table_pipelines.resize(static_cast<std::size_t>(types()));
  for (int t = 0; t < types(); ++t) {
    if (!layout->streams(t)) continue;
    const auto ts = static_cast<std::size_t>(t);
    EmbeddingTable& table = *tables[ts];
    const std::int64_t chunk = layout->table_chunk_rows(t);
    const Tensor& values = table.parameter().value;  // in host memory, updated by every sparse_step
    table_sources[ts] = std::make_unique<FeatureSource>(FeatureSource::from_reader(
        table.rows(), table.dim(), [&values](const FeatureBlock& block, kernels::TensorView out) {
          for (std::int64_t r = block.row_begin; r < block.row_end; ++r)
            std::copy_n(values.data() + r * values.cols() + block.col_begin, block.cols(),
                        out.data + (r - block.row_begin) * out.stride);
        }));
    FeaturePipelineOptions options;
    options.budget_bytes = 2 * chunk * table.dim() * float_bytes;
    options.staging_buffers = 2;
    options.chunk_rows = chunk;
    options.device = device;
    table_pipelines[ts] = std::make_unique<FeaturePipeline>(*table_sources[ts], options);
  }
}

void HeteroModel::Impl::add_table_gradient(int t, kernels::TensorView rows, std::int64_t first_row, const Step& step) {
  const auto ts = static_cast<std::size_t>(t);
  const Dropout& dropout = stages.front().dropout;
  if (dropout.active(step))
    kernels::dropout_backward(rows, rows, dropout.p(), dropout.key(step), {global_ids[ts].data + first_row, rows.rows});
  ConstTensorView g = rows;
  if (g.device.is_cuda()) {  // the table is in host memory
    if (host_gradient_chunk.rows() < g.rows || host_gradient_chunk.cols() != g.cols)
      host_gradient_chunk = Tensor::empty(g.rows, g.cols);
    const kernels::TensorView host = host_gradient_chunk.view().slice_rows(0, g.rows);
    kernels::copy(g, host);
    g = host;
  }
  tables[ts]->accumulate_grad(first_row, g);
}

void HeteroModel::Impl::fill_halo(int t, Tensor& x) const {
  if (dist::HaloExchange* e = exchange(t)) e->forward(x.view());
}

Tensor HeteroModel::Impl::owned_gradient(int t, Tensor grad) const {
  dist::HaloExchange* e = exchange(t);
  if (e == nullptr) return grad;
  e->backward(grad.view());
  Tensor owned = Tensor::empty(outputs(t), grad.cols(), grad.device());
  kernels::copy(grad.view().slice_rows(0, outputs(t)), owned.view());
  return owned;
}

HeteroModelConfig hetero_model_config(const ModelConfig& m) {
  HeteroModelConfig r;
  r.layers = m.layers;
  r.hidden = m.hidden;
  r.dropout = m.dropout;
  r.input_dropout = m.input_dropout;
  r.kind = m.kind;
  r.heads = m.heads;
  r.out_heads = m.out_heads;
  r.attention_dropout = m.attention_dropout;
  r.negative_slope = m.negative_slope;
  r.num_bases = m.num_bases;
  r.bias = m.bias;
  r.embedding_dim = m.embedding_dim;
  r.weight_decay = m.weight_decay;
  r.embedding_weight_decay = m.embedding_weight_decay;
  return r;
}

HeteroModel::HeteroModel(const HeteroModelConfig& config, const RgcnGraph& graph, std::vector<const Tensor*> features,
                         int target_type, std::int64_t num_classes, std::uint64_t seed, kernels::Device device,
                         const HeteroHaloRows* halo, std::vector<const kernels::Bf16Rows*> bf16_features)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.config = config;
  m.graph = &graph;
  m.features = std::move(features);
  m.target = target_type;
  m.num_classes = num_classes;
  m.device = device;
  const int types = graph.num_vertex_types();
  HALO_EXPECTS(static_cast<int>(m.features.size()) == types,
               "HeteroModel: expected one feature tensor (or nullptr) per vertex type (" + std::to_string(types) +
                   "), got " + std::to_string(m.features.size()));
  const auto all_types = static_cast<std::size_t>(types);
  if (halo != nullptr && device.is_cuda())
    throw UnsupportedError("HeteroModel: a rank's part of a distributed R-GCN (halo rows) trains on the cpu only, "
                           "not on " + device.to_string() + "; one GPU trains the whole graph");
  HALO_EXPECTS(bf16_features.empty() || bf16_features.size() == all_types,
               "HeteroModel: expected one bfloat16 feature matrix (or nullptr) per vertex type (" +
                   std::to_string(types) + "), got " + std::to_string(bf16_features.size()));
  m.bf16_features = std::move(bf16_features);
  std::vector<std::int64_t> feature_widths;
  std::vector<char> bf16_types;
  for (int t = 0; t < types; ++t) {
    const Tensor* x = m.features[static_cast<std::size_t>(t)];
    const kernels::Bf16Rows* x16 = m.bf16(t);
    const std::string& name = graph.vertex_type_name(t);
    feature_widths.push_back(x != nullptr ? x->cols() : x16 != nullptr ? x16->cols() : 0);
    if (!m.bf16_features.empty()) bf16_types.push_back(x16 != nullptr ? 1 : 0);
    HALO_EXPECTS(x == nullptr || x16 == nullptr,
                 "HeteroModel: type " + name + " has features in float32 and in bfloat16; give one");
    if (x == nullptr && x16 == nullptr) continue;
    const std::string what = x16 != nullptr ? "bfloat16 features" : "features";
    const std::int64_t rows = x16 != nullptr ? x16->rows() : x->rows();
    const kernels::Device& on = x16 != nullptr ? x16->device() : x->device();
    HALO_EXPECTS(rows == graph.num_inputs(t) && feature_widths.back() > 0,
                 "HeteroModel: " + what + " of type " + name + " are " + std::to_string(rows) + " x " +
                     std::to_string(feature_widths.back()) + ", expected " + std::to_string(graph.num_inputs(t)) +
                     " rows and at least one column");
    HALO_EXPECTS(on == device, "HeteroModel: " + what + " of type " + name + " are on " + on.to_string() +
                                   ", the model on " + device.to_string());
  }
  if (halo != nullptr && config.table_stream_budget > 0)
    throw UnsupportedError("HeteroModel: streamed embedding tables are not available on a rank of a distributed "
                           "run (its tables' halo rows are exchanged whole)");
  std::vector<char> halo_types;
  if (halo != nullptr) {
    HALO_EXPECTS(halo->exchanges.size() == all_types && halo->global_ids.size() == all_types &&
                     halo->type_offsets.size() == all_types + 1,
                 "HeteroModel: the halo rows need an exchange and global ids per vertex type and types + 1 offsets");
    for (dist::HaloExchange* e : halo->exchanges) halo_types.push_back(e != nullptr ? 1 : 0);
  }
  m.layout.emplace(config, graph, std::move(feature_widths), target_type, num_classes, device, std::move(halo_types),
                   bf16_types);
  const HeteroModelLayout& layout = *m.layout;
  for (int t = 0; t < types; ++t)
    HALO_EXPECTS(m.bf16(t) == nullptr || layout.keeps_bf16(t),
                 "HeteroModel: the first " + config.kind + " layer reads the features of type " +
                     graph.vertex_type_name(t) + " whole" + (halo != nullptr ? " on a rank" : "") +
                     ", not only through products; give them in float32");

  std::vector<std::int64_t> type_offsets{0};  // the global id of each type's vertex 0
  if (halo != nullptr) {
    for (int t = 0; t < types; ++t)
      HALO_EXPECTS(halo->global_ids[static_cast<std::size_t>(t)].size == graph.num_inputs(t),
                   "HeteroModel: " + std::to_string(halo->global_ids[static_cast<std::size_t>(t)].size) +
                       " global ids for the " + std::to_string(graph.num_inputs(t)) + " input rows of type " +
                       graph.vertex_type_name(t));
    m.exchanges = halo->exchanges;
    m.global_ids = halo->global_ids;
    type_offsets = halo->type_offsets;
  } else {
    for (int t = 0; t < types; ++t) {
      HALO_EXPECTS(graph.num_inputs(t) == graph.num_outputs(t),
                   "HeteroModel: type " + graph.vertex_type_name(t) + " has halo rows but no exchange was given");
      type_offsets.push_back(type_offsets.back() + graph.num_outputs(t));
    }
    m.own_ids = Array<std::int64_t>::vector(type_offsets.back());
    for (std::int64_t i = 0; i < m.own_ids.size(); ++i) m.own_ids[i] = i;
    for (int t = 0; t < types; ++t)
      m.global_ids.push_back({m.own_ids.data() + type_offsets[static_cast<std::size_t>(t)], graph.num_outputs(t)});
  }

  m.tables.resize(all_types);
  m.table_inputs.resize(all_types);
  for (int t = 0; t < types; ++t) {
    if (!layout.has_table(t)) continue;
    m.tables[static_cast<std::size_t>(t)] = std::make_unique<EmbeddingTable>(
        "embedding." + graph.vertex_type_name(t), graph.num_outputs(t), config.embedding_dim,
        config.embedding_weight_decay, layout.streams(t) ? kernels::Device::cpu() : device);
  }
  m.stream_tables();

  for (int i = 0; i < layout.layers(); ++i) {
    m.stages.emplace_back(Dropout(layout.stage(i).dropout, static_cast<std::uint32_t>(i)));
    Stage& s = m.stages.back();
    s.bases = layout.uses_bases(i);
    s.relu = layout.stage(i).relu;
    s.conv = make_layer(graph, layout.stage(i), device);
    s.conv->set_vertex_ids(m.global_ids);
    // The first layer's inputs need a gradient only where they are a table.
    if (i == 0)
      for (int t = 0; t < types; ++t) s.conv->set_input_grad(t, layout.has_table(t));
    s.dropped.resize(all_types);
    s.out.resize(all_types);
  }

  std::uint64_t index = 0;  // the tensor's position in parameters(): its initialisation stream
  for (Stage& s : m.stages) {
    s.conv->initialize(seed, index, config.weight_decay);
    for (Parameter* p : s.conv->parameters()) {
      m.parameters.push_back(p);
      ++index;
    }
  }
  // A table's rows are the type's owned vertices: row i is vertex global_ids[t][i] - offset.
  for (int t = 0; t < types; ++t) {
    const auto ts = static_cast<std::size_t>(t);
    if (!m.tables[ts]) continue;
    std::vector<std::int64_t> rows(static_cast<std::size_t>(graph.num_outputs(t)));
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = m.global_ids[ts].data[i] - type_offsets[ts];
    glorot_uniform_rows(m.tables[ts]->parameter().value, type_offsets[ts + 1] - type_offsets[ts],
                        {rows.data(), static_cast<std::int64_t>(rows.size())}, seed, index++);
  }
}

HeteroModel::~HeteroModel() = default;
HeteroModel::HeteroModel(HeteroModel&&) noexcept = default;
HeteroModel& HeteroModel::operator=(HeteroModel&&) noexcept = default;

Tensor HeteroModel::forward(const Step& step) {
  Impl& m = *impl_;
  HALO_EXPECTS(step.global_ids.data == nullptr,
               "HeteroModel: step.global_ids must be empty (the model numbers the vertices of all types itself), got " +
                   std::to_string(step.global_ids.size) + " ids");
  m.backward_pending = false;
  m.release_tape();
  const int types = m.types();
  std::vector<const Tensor*> x(static_cast<std::size_t>(types), nullptr);  // each type's input to the layer
  for (int t = 0; t < types; ++t)
    if (m.stages.front().conv->reads(t) && !m.streamed(t) && m.bf16(t) == nullptr)
      x[static_cast<std::size_t>(t)] = m.first_input(t);
  Tensor logits;
  for (std::size_t i = 0; i < m.stages.size(); ++i) {
    Stage& s = m.stages[i];
    std::vector<ConstTensorView> in;
    std::vector<InputMatrix> streamed;  // the first layer's streamed tables, their dropout per chunk
    for (int t = 0; t < types; ++t) {
      const auto ts = static_cast<std::size_t>(t);
      if (!s.conv->reads(t)) {
        in.emplace_back();
      } else if (i == 0 && m.bf16(t) != nullptr) {
        // Widened chunk by chunk for every product, dropped as read (the mask drawn on every read).
        streamed.resize(static_cast<std::size_t>(types));
        const InputMatrix x16(*m.bf16(t));
        streamed[ts] =
            s.dropout.active(step) ? dropped_as_read(x16, s.dropout.p(), s.dropout.key(step), m.global_ids[ts]) : x16;
        in.emplace_back();
      } else if (i == 0 && m.streamed(t)) {
        streamed.resize(static_cast<std::size_t>(types));
        const float p = s.dropout.active(step) ? s.dropout.p() : 0.0f;
        streamed[ts] = InputMatrix(*m.table_pipelines[ts], dropout_rows(p, s.dropout.key(step), m.global_ids[ts]));
        in.emplace_back();
      } else if (s.dropout.active(step) && !(i > 0 && m.stages[i - 1].relu) && s.conv->reads_by_products(t)) {
        // A layer reading this input only through products drops it chunk by chunk as it reads
        // it, in every pass of forward and backward, the mask drawn once and kept as bits: no
        // dropped copy. Its input stays until backward.
        streamed.resize(static_cast<std::size_t>(types));
        streamed[ts] = dropped_as_read(InputMatrix(*x[ts]), s.dropout.p(), s.dropout.key(step), m.global_ids[ts]);
        in.emplace_back();
      } else if (s.dropout.active(step)) {
        // The layer keeps the dropout's output; backward regenerates the mask, or after a ReLU
        // gates by that output alone (both backward passes in one), so a ReLU output is dropped in
        // place (its halo rows too: they hold their owners' values and ids) and any other input
        // is freed once its dropped copy is written.
        if (i > 0 && m.stages[i - 1].relu) {
          s.dropped[ts] = std::move(m.stages[i - 1].out[ts]);
          s.dropout.forward_in_place(s.dropped[ts], m.type_step(step, t));
        } else {
          s.dropped[ts] = s.dropout.forward(*x[ts], m.type_step(step, t));
          if (i > 0) m.stages[i - 1].out[ts] = Tensor();
        }
        in.push_back(s.dropped[ts].view());
      } else {
        in.push_back(x[ts]->view());
      }
    }
    std::vector<Tensor> y = s.conv->forward(in, step, streamed);
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
      x[ts] = nullptr;
      if (!s.conv->computes(t)) continue;
      Tensor& out = s.out[ts];
      if (m.inputs(t) == m.outputs(t)) {  // no halo rows: in place
        if (s.relu) kernels::relu_forward(y[ts].view(), y[ts].view());
        out = std::move(y[ts]);
      } else {
        out = Tensor::empty(m.inputs(t), y[ts].cols(), y[ts].device());
        if (s.relu)
          kernels::relu_forward(y[ts].view(), out.view().slice_rows(0, m.outputs(t)));
        else
          kernels::copy(y[ts].view(), out.view().slice_rows(0, m.outputs(t)));
        y[ts] = Tensor();
      }
      m.fill_halo(t, out);
      x[ts] = &out;
    }
  }
  if (!step.training) m.release_tape();
  m.backward_pending = step.training;
  return logits;
}

void HeteroModel::backward(Tensor grad_logits, const Step& step) {
  Impl& m = *impl_;
  HALO_EXPECTS(m.backward_pending, "HeteroModel: backward needs a training forward before it");
  const std::int64_t rows = m.stages.back().conv->training_rows(m.target);
  HALO_EXPECTS(grad_logits.rows() == rows && grad_logits.cols() == m.num_classes,
               "HeteroModel: the logits' gradient is " + std::to_string(grad_logits.rows()) + " x " +
                   std::to_string(grad_logits.cols()) + ", expected " + std::to_string(rows) + " x " +
                   std::to_string(m.num_classes));
  m.backward_pending = false;
  const int types = m.types();
  // The last layer outputs the target's logits only; each layer before receives the gradients
  // of exactly the outputs it computes.
  std::vector<Tensor> g(static_cast<std::size_t>(types));
  g[static_cast<std::size_t>(m.target)] = std::move(grad_logits);
  for (std::size_t i = m.stages.size(); i-- > 0;) {
    Stage& s = m.stages[i];
    // A hidden layer's ReLU backward, unless the next layer's dropout backward did it already.
    if (s.relu && i + 1 < m.stages.size() && !m.stages[i + 1].dropout.active(step)) {
      for (int t = 0; t < types; ++t) {
        const auto ts = static_cast<std::size_t>(t);
        if (!s.conv->computes(t)) continue;
        const ConstTensorView out = s.out[ts].view().slice_rows(0, m.outputs(t));
        kernels::relu_backward(out, g[ts].view(), g[ts].view());
      }
    }
    for (Tensor& out : s.out) out = Tensor();  // the next layer, the only other reader, is done
    const HeteroLayer::RowGradientSink to_table = [&](int t, kernels::TensorView chunk, std::int64_t first_row) {
      m.add_table_gradient(t, chunk, first_row, step);
    };
    g = s.conv->backward(std::move(g), step, i == 0 ? to_table : HeteroLayer::RowGradientSink{});
    for (int t = 0; t < types; ++t) {
      const auto ts = static_cast<std::size_t>(t);
      if (s.conv->reads(t) && s.conv->input_grad(t) && !(i == 0 && m.streamed(t))) {
        if (i > 0 && s.dropout.active(step) && m.stages[i - 1].relu) {
          // The input is the previous layer's ReLU output, dropped: both backward passes in one,
          // on every input row (a halo row's copy gates exactly as its owner's row does).
          kernels::relu_backward(s.dropped[ts].view(), g[ts].view(), g[ts].view(),
                                 kernels::dropout_scale(s.dropout.p()));
        } else {
          g[ts] = s.dropout.backward(std::move(g[ts]), m.type_step(step, t));
        }
        g[ts] = m.owned_gradient(t, std::move(g[ts]));
        if (i == 0) m.tables[ts]->accumulate_grad(g[ts].view());
      }
      s.dropped[ts] = Tensor();
    }
  }
}

void HeteroModel::set_training_rows(kernels::IndexView rows) {
  impl_->backward_pending = false;
  impl_->stages.back().conv->set_training_rows(impl_->target, rows);
}

std::vector<Parameter*> HeteroModel::parameters() { return impl_->parameters; }

std::vector<std::pair<std::string, Tensor*>> HeteroModel::buffers() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (auto& table : impl_->tables) {
    if (!table) continue;
    out.emplace_back(table->parameter().name, &table->parameter().value);
    for (auto& state : table->state()) out.push_back(state);
  }
  return out;
}

std::vector<std::pair<std::string, Array<std::int64_t>*>> HeteroModel::counters() {
  std::vector<std::pair<std::string, Array<std::int64_t>*>> out;
  for (auto& table : impl_->tables)
    if (table) out.emplace_back(table->parameter().name + ".steps", &table->row_steps());
  return out;
}

void HeteroModel::zero_grad() {
  for (Parameter* p : impl_->parameters) p->grad.fill(0.0f);
  for (auto& table : impl_->tables)
    if (table) table->zero_grad();
}

void HeteroModel::sparse_step(const OptimizerConfig& config) {
  for (auto& table : impl_->tables)
    if (table) table->step(config);
}

const HeteroModelConfig& HeteroModel::config() const { return impl_->config; }
int HeteroModel::target_type() const { return impl_->target; }
std::int64_t HeteroModel::num_classes() const { return impl_->num_classes; }
int HeteroModel::num_layers() const { return static_cast<int>(impl_->stages.size()); }

EmbeddingTable* HeteroModel::embedding(int type) {
  HALO_EXPECTS(type >= 0 && type < impl_->types(), "HeteroModel: no vertex type " + std::to_string(type) +
                                                       " (there are " + std::to_string(impl_->types()) + ")");
  return impl_->tables[static_cast<std::size_t>(type)].get();
}

bool HeteroModel::uses_bases(int layer) const { return impl_->stages.at(static_cast<std::size_t>(layer)).bases; }

bool HeteroModel::streams_tables() const {
  for (int t = 0; t < impl_->types(); ++t)
    if (impl_->layout->streams(t)) return true;
  return false;
}

std::int64_t HeteroModel::table_chunk_rows(int type) const {
  HALO_EXPECTS(type >= 0 && type < impl_->types(), "HeteroModel: no vertex type " + std::to_string(type));
  return impl_->layout->table_chunk_rows(type);
}

const HeteroModelLayout& HeteroModel::layout() const { return *impl_->layout; }

}  // namespace halo::train
