// HeteroModelLayout: the layers, tables and byte counts of an R-GCN or HGT, before it is built.
#include "train/models/hetero_model_layout.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <variant>

#include "graph/base/error.hpp"
#include "kernels/bf16_rows.hpp"
#include "train/layers/embedding_table.hpp"
#include "train/layers/layer_input.hpp"
#include "train/layers/remembered_dropout.hpp"
#include "train/layers/training_rows.hpp"
#include "train/models/hetero_model.hpp"

namespace halo::train {
namespace {

constexpr std::int64_t float_bytes = sizeof(float);

void check_config(const HeteroModelConfig& c, std::int64_t num_classes) {
  HALO_EXPECTS(c.kind == "rgcn" || c.kind == "hgt" || c.kind == "rgat",
               "HeteroModel: kind must be rgcn, hgt or rgat, got '" + c.kind + "'");
  if (c.kind == "rgat") {
    HALO_EXPECTS(c.hidden > 0 && c.heads > 0 && c.out_heads > 0,
                 "HeteroModel: rgat needs a positive hidden width and head counts, got hidden " +
                     std::to_string(c.hidden) + ", heads " + std::to_string(c.heads) + " and out_heads " +
                     std::to_string(c.out_heads));
    HALO_EXPECTS(c.num_bases == 0, "HeteroModel: rgat has no basis decomposition (num_bases " +
                                       std::to_string(c.num_bases) + " is for rgcn)");
    if (c.table_stream_budget > 0)
      throw UnsupportedError("HeteroModel: rgat reads its embedding tables resident; streamed tables "
                             "(table_stream_budget) are for rgcn");
  }
  if (c.kind == "hgt") {
    HALO_EXPECTS(c.hidden > 0 && c.heads > 0 && c.hidden % c.heads == 0,
                 "HeteroModel: hgt needs a hidden width divisible by its heads, got hidden " +
                     std::to_string(c.hidden) + " and " + std::to_string(c.heads) + " heads");
    HALO_EXPECTS(c.num_bases == 0, "HeteroModel: hgt has no basis decomposition (num_bases " +
                                       std::to_string(c.num_bases) + " is for rgcn)");
    if (c.table_stream_budget > 0)
      throw UnsupportedError("HeteroModel: hgt reads its embedding tables resident; streamed tables "
                             "(table_stream_budget) are for rgcn");
  }
  HALO_EXPECTS(c.layers >= 1, "HeteroModel: needs at least one layer, got " + std::to_string(c.layers));
  HALO_EXPECTS(c.layers == 1 || c.hidden > 0,
               "HeteroModel: hidden width must be positive, got " + std::to_string(c.hidden));
  HALO_EXPECTS(num_classes > 0, "HeteroModel: num_classes must be positive, got " + std::to_string(num_classes));
  HALO_EXPECTS(c.num_bases >= 0, "HeteroModel: num_bases must be >= 0, got " + std::to_string(c.num_bases));
  HALO_EXPECTS(c.weight_decay >= 0 && c.embedding_weight_decay >= 0,
               "HeteroModel: weight decays must be non-negative, got " + std::to_string(c.weight_decay) + " and " +
                   std::to_string(c.embedding_weight_decay));
}

}  // namespace

const std::vector<std::int64_t>& HeteroStageLayout::in_dims() const {
  return std::visit([](const auto& l) -> const std::vector<std::int64_t>& { return l.in_dims; }, layer);
}

std::int64_t HeteroStageLayout::out_dim() const {
  if (const auto* rgat = std::get_if<RgatConvLayout>(&layer)) return rgat->out_width();
  return std::visit([](const auto& l) { return l.out_dim; }, layer);
}

bool HeteroStageLayout::computes(int t) const {
  return std::visit([t](const auto& l) { return l.computes.at(static_cast<std::size_t>(t)) != 0; }, layer);
}

bool HeteroStageLayout::reads(int t) const {
  const auto ts = static_cast<std::size_t>(t);
  if (const auto* linear = std::get_if<TypedLinearLayout>(&layer)) return linear->computes.at(ts) != 0;
  if (const auto* hgt = std::get_if<HgtConvLayout>(&layer)) return hgt->reads.at(ts) != 0;
  if (const auto* rgat = std::get_if<RgatConvLayout>(&layer)) return rgat->reads.at(ts) != 0;
  return std::get<RgcnConvLayout>(layer).reads.at(ts) != 0;
}

bool HeteroStageLayout::reads_by_products(int t, int selected_type) const {
  const auto ts = static_cast<std::size_t>(t);
  if (const auto* linear = std::get_if<TypedLinearLayout>(&layer))
    return linear->computes.at(ts) != 0 && t != selected_type;
  if (const auto* rgat = std::get_if<RgatConvLayout>(&layer)) return rgat->reads.at(ts) != 0;
  if (const auto* rgcn = std::get_if<RgcnConvLayout>(&layer)) return rgcn->streamed.at(ts) != 0;
  return false;
}

std::int64_t HeteroStageLayout::parameter_bytes(const RgcnGraph& graph) const {
  if (const auto* linear = std::get_if<TypedLinearLayout>(&layer)) return linear->parameter_bytes();
  if (const auto* hgt = std::get_if<HgtConvLayout>(&layer)) return hgt->parameter_bytes(graph);
  if (const auto* rgat = std::get_if<RgatConvLayout>(&layer)) return rgat->parameter_bytes(graph);
  return std::get<RgcnConvLayout>(layer).parameter_bytes(graph);
}

std::int64_t HeteroStageLayout::saved_bytes(const RgcnGraph& graph, int selected_type,
                                            std::int64_t selected_rows) const {
  if (const auto* linear = std::get_if<TypedLinearLayout>(&layer))  // views of its inputs, or the selected rows
    return selected_type >= 0 && selected_rows >= 0 && linear->computes.at(static_cast<std::size_t>(selected_type)) != 0
               ? selected_rows * linear->in_dims[static_cast<std::size_t>(selected_type)] * float_bytes
               : 0;
  if (const auto* hgt = std::get_if<HgtConvLayout>(&layer)) return hgt->saved_bytes(graph);
  if (const auto* rgat = std::get_if<RgatConvLayout>(&layer)) return rgat->saved_bytes(graph);
  return std::get<RgcnConvLayout>(layer).saved_bytes(graph, selected_type, selected_rows);
}

std::int64_t HeteroStageLayout::backward_bytes(const RgcnGraph& graph, const std::vector<char>& input_grad,
                                               const std::vector<char>& chunked, int selected_type,
                                               std::int64_t selected_rows) const {
  std::int64_t input_grad_bytes = 0;
  for (int t = 0; t < graph.num_vertex_types(); ++t)
    if (reads(t) && input_grad.at(static_cast<std::size_t>(t)) != 0)
      input_grad_bytes += graph.num_inputs(t) * in_dims()[static_cast<std::size_t>(t)] * float_bytes;
  const std::int64_t saved = saved_bytes(graph, selected_type, selected_rows);
  if (const auto* linear = std::get_if<TypedLinearLayout>(&layer)) {
    std::int64_t rows_by_width = 0;  // the largest input gradient's product before it is placed
    for (int t = 0; t < graph.num_vertex_types(); ++t)
      if (linear->computes[static_cast<std::size_t>(t)] != 0 && input_grad.at(static_cast<std::size_t>(t)) != 0)
        rows_by_width = std::max(rows_by_width, graph.num_outputs(t) * linear->in_dims[static_cast<std::size_t>(t)]);
    return saved + rows_by_width * float_bytes + input_grad_bytes;
  }
  if (const auto* hgt = std::get_if<HgtConvLayout>(&layer))
    return saved + hgt->workspace_bytes(graph) + input_grad_bytes;
  if (const auto* rgat = std::get_if<RgatConvLayout>(&layer))
    return rgat->backward_held_bytes(graph, chunked) + input_grad_bytes;
  return saved + std::get<RgcnConvLayout>(layer).backward_bytes(graph, input_grad_bytes);
}

std::int64_t HeteroStageLayout::forward_output_rows(const RgcnGraph& graph, int t, std::int64_t selected_rows) const {
  const std::int64_t whole = graph.num_inputs(t);
  if (selected_rows < 0) return whole;
  if (std::holds_alternative<RgatConvLayout>(layer)) return whole + selected_rows;
  if (const auto* rgcn = std::get_if<RgcnConvLayout>(&layer))
    if (rgcn->aggregate.at(static_cast<std::size_t>(t)) == 0) return whole + selected_rows;
  return selected_rows;
}

std::int64_t HeteroStageLayout::gradient_output_rows(const RgcnGraph& graph, int t, std::int64_t selected_rows) const {
  if (selected_rows < 0 || std::holds_alternative<RgatConvLayout>(layer)) return graph.num_inputs(t);
  return selected_rows;
}

std::int64_t HeteroStageLayout::graph_bytes(const RgcnGraph& graph, int selected_type,
                                            kernels::IndexView selected_rows) const {
  if (std::holds_alternative<TypedLinearLayout>(layer)) return 0;
  if (const auto* hgt = std::get_if<HgtConvLayout>(&layer)) return hgt->graph_bytes(graph);
  if (const auto* rgat = std::get_if<RgatConvLayout>(&layer)) return rgat->graph_bytes(graph);
  return std::get<RgcnConvLayout>(layer).graph_bytes(graph, selected_type, selected_rows);
}

HeteroModelLayout::HeteroModelLayout(const HeteroModelConfig& config, const RgcnGraph& graph,
                                     std::vector<std::int64_t> feature_widths, int target_type,
                                     std::int64_t num_classes, kernels::Device device, std::vector<char> halo_types,
                                     const std::vector<char>& bf16_features)
    : graph_(&graph),
      feature_widths_(std::move(feature_widths)),
      embedding_dim_(config.embedding_dim),
      halo_types_(std::move(halo_types)),
      target_(target_type),
      device_(device) {
  check_config(config, num_classes);
  const int types = graph.num_vertex_types();
  const auto all_types = static_cast<std::size_t>(types);
  HALO_EXPECTS(feature_widths_.size() == all_types, "HeteroModel: expected one feature tensor (or nullptr) per vertex "
                                                    "type (" + std::to_string(types) + "), got " +
                                                        std::to_string(feature_widths_.size()));
  HALO_EXPECTS(target_type >= 0 && target_type < types, "HeteroModel: target type " + std::to_string(target_type) +
                                                            " is not one of the " + std::to_string(types) +
                                                            " vertex types");
  HALO_EXPECTS(halo_types_.empty() || halo_types_.size() == all_types,
               "HeteroModel: the halo rows need an exchange per vertex type");

  // The tables, and with a stream budget their chunks: the budget split evenly over the tables,
  // each share holding two staging chunks and the chunk its gradient comes back in.
  std::vector<int> table_types;
  for (int t = 0; t < types; ++t) {
    if (!has_table(t)) continue;
    HALO_EXPECTS(config.embedding_dim > 0, "HeteroModel: type " + graph.vertex_type_name(t) +
                                               " has no features and embedding_dim is " +
                                               std::to_string(config.embedding_dim) + " (must be positive)");
    table_types.push_back(t);
  }
  chunk_rows_.assign(all_types, 0);
  if (config.table_stream_budget > 0 && !table_types.empty()) {
    const auto count = static_cast<std::int64_t>(table_types.size());
    const std::int64_t share = config.table_stream_budget / count;
    const std::int64_t row_bytes = config.embedding_dim * float_bytes;
    for (int t : table_types) {
      const std::int64_t rows = graph.num_outputs(t);
      const std::int64_t chunk = rows == 0 ? 1 : std::min(rows, share / (3 * row_bytes));
      HALO_EXPECTS(chunk >= 1, "HeteroModel: a table stream budget of " + std::to_string(config.table_stream_budget) +
                                   " bytes leaves " + std::to_string(share) + " to table embedding." +
                                   graph.vertex_type_name(t) + ", below the 3 rows of " + std::to_string(row_bytes) +
                                   " bytes it needs; give at least " + std::to_string(count * 3 * row_bytes) +
                                   " bytes");
      chunk_rows_[static_cast<std::size_t>(t)] = chunk;
    }
  }

  // The types each graph layer must output: the last one the target's (R-GCN: its logits; HGT:
  // its representation, which the output projection reads); each one before what the next one
  // reads (its outputs themselves and the sources of the relations into them).
  const auto layers = static_cast<std::size_t>(config.layers);
  std::vector<std::vector<char>> needed(layers, std::vector<char>(all_types, 0));
  needed[layers - 1][static_cast<std::size_t>(target_type)] = 1;
  for (std::size_t i = layers - 1; i > 0; --i) {
    needed[i - 1] = needed[i];
    for (int r = 0; r < graph.num_relations(); ++r)
      if (needed[i][static_cast<std::size_t>(graph.relation_dst(r))] != 0)
        needed[i - 1][static_cast<std::size_t>(graph.relation_src(r))] = 1;
  }
  std::vector<std::int64_t> inputs;  // per type: the first layer's input width
  for (int t = 0; t < types; ++t) inputs.push_back(input_width(t));
  if (config.kind == "hgt") {
    add_hgt_stages(config, needed, inputs, target_type, num_classes);
  } else if (config.kind == "rgat") {
    add_rgat_stages(config, needed, inputs, num_classes);
  } else {
    add_rgcn_stages(config, needed, inputs, num_classes);
  }
  HALO_EXPECTS(bf16_features.empty() || bf16_features.size() == all_types,
               "HeteroModel: expected a bfloat16 flag per vertex type (" + std::to_string(types) + "), got " +
                   std::to_string(bf16_features.size()));
  if (bf16_features.empty() || !halo_types_.empty()) return;
  bf16_.assign(all_types, 0);
  const int selected = this->layers() == 1 ? target_type : -1;  // a last layer reads its selected rows whole
  for (int t = 0; t < types; ++t)
    bf16_[static_cast<std::size_t>(t)] =
        bf16_features[static_cast<std::size_t>(t)] != 0 && !has_table(t) && stage(0).reads_by_products(t, selected);
}

void HeteroModelLayout::add_rgcn_stages(const HeteroModelConfig& config, const std::vector<std::vector<char>>& needed,
                                        const std::vector<std::int64_t>& inputs, std::int64_t num_classes) {
  const RgcnGraph& graph = *graph_;
  const int types = graph.num_vertex_types();
  const std::size_t layers = needed.size();
  for (std::size_t i = 0; i < layers; ++i) {
    RgcnConvOptions options;
    std::vector<std::int64_t> in_dims;
    for (int t = 0; t < types; ++t) {
      if (needed[i][static_cast<std::size_t>(t)] != 0) options.outputs.push_back(t);
      if (i == 0 && streams(t)) options.streamed.push_back(t);
      in_dims.push_back(i == 0 ? inputs[static_cast<std::size_t>(t)] : config.hidden);
    }
    // Bases need one input width over all computed relations; a layer where the widths differ
    // keeps one weight per relation.
    std::vector<std::int64_t> widths;
    for (int r = 0; r < graph.num_relations(); ++r)
      if (needed[i][static_cast<std::size_t>(graph.relation_dst(r))] != 0)
        widths.push_back(in_dims[static_cast<std::size_t>(graph.relation_src(r))]);
    const bool same_width =
        !widths.empty() && std::all_of(widths.begin(), widths.end(), [&](std::int64_t w) { return w == widths[0]; });
    const bool bases = config.num_bases > 0 && same_width;
    bases_.push_back(bases ? 1 : 0);
    const std::int64_t out = i + 1 == layers ? num_classes : config.hidden;
    const std::string name = "conv" + std::to_string(i);
    stages_.push_back({RgcnConvLayout(graph, std::move(in_dims), out, bases ? config.num_bases : 0, config.bias,
                                      options, name),
                       name, i == 0 ? config.input_dropout : config.dropout, i + 1 < layers});
  }
}

void HeteroModelLayout::add_hgt_stages(const HeteroModelConfig& config, const std::vector<std::vector<char>>& needed,
                                       const std::vector<std::int64_t>& inputs, int target_type,
                                       std::int64_t num_classes) {
  const RgcnGraph& graph = *graph_;
  const int types = graph.num_vertex_types();
  const auto all_types = static_cast<std::size_t>(types);
  // The input projection computes what the first HGT layer reads: its outputs and their sources.
  std::vector<char> projected = needed[0];
  for (int r = 0; r < graph.num_relations(); ++r)
    if (needed[0][static_cast<std::size_t>(graph.relation_dst(r))] != 0)
      projected[static_cast<std::size_t>(graph.relation_src(r))] = 1;
  std::vector<int> outputs;
  for (int t = 0; t < types; ++t)
    if (projected[static_cast<std::size_t>(t)] != 0) outputs.push_back(t);
  stages_.push_back({TypedLinearLayout(graph, inputs, config.hidden, outputs, config.bias, "input"), "input",
                     config.input_dropout, true});
  bases_.push_back(0);
  for (std::size_t i = 0; i < needed.size(); ++i) {
    HgtConvOptions options;
    options.heads = config.heads;
    for (int t = 0; t < types; ++t)
      if (needed[i][static_cast<std::size_t>(t)] != 0) options.outputs.push_back(t);
    const std::string name = "conv" + std::to_string(i);
    stages_.push_back({HgtConvLayout(graph, std::vector<std::int64_t>(all_types, config.hidden), config.hidden,
                                     options, name),
                       name, config.dropout, false});
    bases_.push_back(0);
  }
  stages_.push_back({TypedLinearLayout(graph, std::vector<std::int64_t>(all_types, config.hidden), num_classes,
                                       {target_type}, config.bias, "output"),
                     "output", config.dropout, false});
  bases_.push_back(0);
}

void HeteroModelLayout::add_rgat_stages(const HeteroModelConfig& config, const std::vector<std::vector<char>>& needed,
                                        const std::vector<std::int64_t>& inputs, std::int64_t num_classes) {
  const int types = graph_->num_vertex_types();
  const std::size_t layers = needed.size();
  for (std::size_t i = 0; i < layers; ++i) {
    const bool last = i + 1 == layers;
    RgatConvOptions options;
    options.heads = last ? config.out_heads : config.heads;
    options.concat = !last || config.out_heads == 1;
    options.negative_slope = config.negative_slope;
    options.attention_dropout = config.attention_dropout;
    options.layer = static_cast<std::uint32_t>(i);
    std::vector<std::int64_t> in_dims;
    for (int t = 0; t < types; ++t) {
      if (needed[i][static_cast<std::size_t>(t)] != 0) options.outputs.push_back(t);
      in_dims.push_back(i == 0 ? inputs[static_cast<std::size_t>(t)] : config.heads * config.hidden);
    }
    const std::string name = "conv" + std::to_string(i);
    stages_.push_back({RgatConvLayout(*graph_, std::move(in_dims), last ? num_classes : config.hidden, options, name),
                       name, i == 0 ? config.input_dropout : config.dropout, !last});
    bases_.push_back(0);
  }
}

std::int64_t HeteroModelLayout::input_width(int t) const {
  return has_table(t) ? embedding_dim_ : feature_widths_.at(static_cast<std::size_t>(t));
}

std::int64_t HeteroModelLayout::feature_bytes() const {
  const RgcnGraph& g = *graph_;
  std::int64_t bytes = 0;
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    const std::int64_t cols = feature_widths_[static_cast<std::size_t>(t)];
    bytes += keeps_bf16(t) ? kernels::Bf16Rows::bytes_for(g.num_inputs(t), cols) : g.num_inputs(t) * cols * float_bytes;
  }
  return bytes;
}

std::int64_t HeteroModelLayout::activation_bytes(std::int64_t training_rows) const {
  const RgcnGraph& g = *graph_;
  // Training: what forward keeps, summed over the layers before the one at hand; the most held at
  // once. Evaluation keeps nothing: a layer's input and outputs, its workspace bounded by what
  // training would save.
  const auto types = static_cast<std::size_t>(g.num_vertex_types());
  std::int64_t kept_before = 0, peak = 0, evaluation = 0;
  std::vector<std::int64_t> previous(types, 0);  // per type: the previous layer's outputs, this layer's input
  for (int i = 0; i < layers(); ++i) {
    const HeteroStageLayout& c = stage(i);
    const bool last = i + 1 == layers();
    // The last layer trains on the selected rows of the target; it computes no other type.
    const int selected_type = last && training_rows >= 0 ? target_ : -1;
    const std::int64_t selected_rows = last ? training_rows : -1;
    // An active dropout acts in place on a ReLU's output, as the layer reads an input it reads
    // only through products (a chunk at a time), or else on a copy.
    const bool in_place = i > 0 && stage(i - 1).relu;
    std::int64_t copied = 0, replaced = 0, chunk = 0, masks = 0, outputs = 0, output_grads = 0, all_outputs = 0;
    std::int64_t widened = 0;  // the chunk bfloat16 features are widened into, in evaluation too
    std::vector<char> input_grad(types, 0), chunked(types, 0);
    std::vector<std::int64_t> next(types, 0);
    for (int t = 0; t < g.num_vertex_types(); ++t) {
      const auto ts = static_cast<std::size_t>(t);
      if (i == 0 && streams(t)) continue;  // chunks only: table_bytes counts them
      // The first layer's inputs need a gradient only where they are a table.
      if (c.reads(t)) {
        input_grad[ts] = i > 0 || has_table(t) ? 1 : 0;
        const std::int64_t in = g.num_inputs(t) * c.in_dims()[ts] * float_bytes;
        if (i == 0 && keeps_bf16(t)) {  // widened chunk by chunk, dropped as read (the mask drawn each read)
          widened =
              std::max(widened, resident_chunk_rows(g.num_inputs(t), c.in_dims()[ts]) * c.in_dims()[ts] * float_bytes);
          chunked[ts] = 1;
        } else if (c.dropout > 0.0f && !in_place && c.reads_by_products(t, selected_type)) {
          chunk =
              std::max(chunk, resident_chunk_rows(g.num_inputs(t), c.in_dims()[ts]) * c.in_dims()[ts] * float_bytes);
          masks += remembered_dropout_bytes(g.num_inputs(t), c.in_dims()[ts], device_);
          chunked[ts] = 1;
        } else if (c.dropout > 0.0f) {
          copied += in;
          replaced += previous[ts];
        }
      }
      if (!c.computes(t)) continue;
      next[ts] = g.num_inputs(t) * c.out_dim() * float_bytes;
      all_outputs += next[ts];
      const bool selected = selected_type == t;
      outputs += (selected ? c.forward_output_rows(g, t, selected_rows) : g.num_inputs(t)) * c.out_dim() * float_bytes;
      output_grads +=
          (selected ? c.gradient_output_rows(g, t, selected_rows) : g.num_inputs(t)) * c.out_dim() * float_bytes;
    }
    std::int64_t previous_outputs = 0;
    for (std::int64_t b : previous) previous_outputs += b;
    evaluation = std::max(evaluation, previous_outputs + c.saved_bytes(g) + all_outputs + widened);
    // A dropout's output kept as the layer's input replaces the previous layer's outputs: dropped
    // in place after a ReLU, else a copy (the features' too), the outputs freed once it is
    // written, so both live while it runs.
    const std::int64_t saved = c.saved_bytes(g, selected_type, selected_rows);
    if (!in_place) peak = std::max(peak, kept_before + copied);
    kept_before -= replaced;
    const std::int64_t dropped = copied + masks + std::max(chunk, widened);
    // Forward: the layer's saved tensors and its outputs; backward (the later layers' tensors
    // gone, this layer's outputs replaced by their gradients): the outputs' gradients and what the
    // layer's backward holds (its saved tensors among it). The last layer's outputs are the
    // logits: the loss writes their gradient beside them.
    const std::int64_t logits =
        last ? (selected_rows >= 0 ? selected_rows : g.num_inputs(target_)) * c.out_dim() * float_bytes : 0;
    peak = std::max({peak, kept_before + dropped + saved + outputs, kept_before + dropped + saved + 2 * logits,
                     kept_before + dropped + output_grads +
                         c.backward_bytes(g, input_grad, chunked, selected_type, selected_rows)});
    previous = last ? std::vector<std::int64_t>(types, 0) : next;  // the next layer's input (after its ReLU)
    kept_before += copied + masks + saved;
    for (std::int64_t b : previous) kept_before += b;
  }
  return std::max({peak, kept_before, evaluation});
}

std::int64_t HeteroModelLayout::parameter_bytes() const {
  std::int64_t bytes = 0;
  for (const HeteroStageLayout& c : stages_) bytes += c.parameter_bytes(*graph_);
  return bytes;
}

std::int64_t HeteroModelLayout::table_bytes() const {
  const RgcnGraph& g = *graph_;
  std::int64_t bytes = 0;
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    if (!has_table(t)) continue;
    if (streams(t)) {  // two staging chunks and the gradient's
      bytes += 3 * table_chunk_rows(t) * embedding_dim_ * float_bytes;
      continue;
    }
    bytes += EmbeddingTable::bytes_for(g.num_outputs(t), embedding_dim_);
    if (halo(t)) bytes += g.num_inputs(t) * embedding_dim_ * float_bytes;  // with its halo rows
  }
  return bytes;
}

std::int64_t HeteroModelLayout::host_bytes() const {
  const RgcnGraph& g = *graph_;
  // One process numbers every vertex itself (8 bytes each); a rank reads its ids from its part.
  std::int64_t bytes = 0;
  if (halo_types_.empty())
    for (int t = 0; t < g.num_vertex_types(); ++t) bytes += 8 * g.num_outputs(t);
  if (!device_.is_cuda()) bytes += table_bytes();
  for (int t = 0; t < g.num_vertex_types(); ++t)
    if (streams(t)) bytes += EmbeddingTable::bytes_for(g.num_outputs(t), embedding_dim_);
  return bytes;
}

std::int64_t HeteroModelLayout::graph_bytes(kernels::IndexView training_rows) const {
  std::int64_t bytes = 0;
  for (std::size_t i = 0; i + 1 < stages_.size(); ++i) bytes += stages_[i].graph_bytes(*graph_);
  return bytes + stages_.back().graph_bytes(*graph_, target_, training_rows);
}

std::int64_t HeteroModelLayout::selection_bytes(std::int64_t training_rows) const {
  return TrainingRows::bytes_for(training_rows, device_);
}

}  // namespace halo::train
