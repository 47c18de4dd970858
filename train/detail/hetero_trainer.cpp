// R-GCN, HGT and RGAT behind train() (train/trainer.hpp): an HeteroModel per run, driven by the
// shared trainer loop.
#include "train/detail/hetero_problem.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/loss.hpp"
#include "train/detail/run_loop.hpp"
#include "train/dist/communicator.hpp"
#include "train/features/detail/feature_setup.hpp"
#include "train/layers/rgcn_conv.hpp"
#include "train/memory_plan.hpp"
#include "train/models/model_config.hpp"
#include "train/trainable.hpp"

namespace halo::train::detail {
namespace {

// An HeteroModel seen by the trainer loop; its embedding tables step after the optimiser.
class HeteroTrainable : public Trainable {
 public:
  explicit HeteroTrainable(HeteroModel model) : model_(std::move(model)) {}
  kernels::Tensor forward(const Step& step) override { return model_.forward(step); }
  void backward(kernels::Tensor grad_logits, const Step& step) override { model_.backward(std::move(grad_logits), step); }
  std::vector<Parameter*> parameters() override { return model_.parameters(); }
  std::vector<std::pair<std::string, kernels::Tensor*>> buffers() override { return model_.buffers(); }
  std::vector<std::pair<std::string, Array<std::int64_t>*>> counters() override { return model_.counters(); }
  void zero_grad() override { model_.zero_grad(); }
  void after_step(const OptimizerConfig& optimizer) override { model_.sparse_step(optimizer); }
  bool take_training_rows(kernels::IndexView rows) override {
    model_.set_training_rows(rows);
    return true;
  }
  const HeteroModel& model() const { return model_; }

 private:
  HeteroModel model_;
};

void check_inputs(const datasets::Dataset& ds) {
  HALO_EXPECTS(ds.meta.is_hetero, "dataset '" + ds.meta.name + "' is homogeneous; train it with --model " + homogeneous_kinds);
  HALO_EXPECTS(ds.meta.task == datasets::Task::multiclass,
               std::string("dataset '") + ds.meta.name + "' has a " + datasets::to_string(ds.meta.task) +
                   " task; only multiclass training is supported");
  const datasets::NodeType& t = ds.target();
  HALO_EXPECTS(t.labels.size() == t.count && t.labels.cols() == 1,
               fmt::format("dataset '{}' needs one label per '{}' vertex ({}), has {}", ds.meta.name, t.name, t.count,
                           t.labels.size()));
  HALO_EXPECTS(ds.meta.num_classes >= 2, "dataset '" + ds.meta.name + "' has " + std::to_string(ds.meta.num_classes) +
                                             " classes, expected >= 2");
}

std::string fingerprint(const HeteroProblem& p, const HeteroModelConfig& m, const TrainConfig& c) {
  nlohmann::json j = training_settings_json(c);
  j["dataset"] = {{"name", p.name}, {"num_nodes", p.num_nodes}, {"num_edges", p.num_edges},
                  {"target_type", p.target_type}, {"num_classes", p.num_classes}};
  j["model"] = {{"kind", m.kind}, {"layers", m.layers}, {"hidden", m.hidden}, {"dropout", m.dropout},
                {"input_dropout", m.input_dropout}, {"num_bases", m.num_bases}, {"bias", m.bias},
                {"embedding_dim", m.embedding_dim}, {"weight_decay", m.weight_decay},
                {"embedding_weight_decay", m.embedding_weight_decay}};
  if (m.kind == "hgt") j["model"]["heads"] = m.heads;
  if (m.kind == "rgat") {
    j["model"]["heads"] = m.heads;
    j["model"]["out_heads"] = m.out_heads;
    j["model"]["attention_dropout"] = m.attention_dropout;
    j["model"]["negative_slope"] = m.negative_slope;
  }
  return j.dump();
}

// Bytes of the features of every type that has them as float32, with their halo rows on a rank.
std::int64_t feature_bytes(const HeteroProblem& problem) {
  std::int64_t bytes = 0;
  for (int t = 0; t < problem.graph->num_vertex_types(); ++t)
    bytes += problem.graph->num_inputs(t) * problem.feature_widths[static_cast<std::size_t>(t)] * 4;
  return bytes;
}

// The plan of the model's device, made from its layout before anything of it exists. On the CPU:
// the process before training, the graph with its relation stacks, the layers' matrices, the
// model's items and the host state (tables, dropout keys). On a GPU only what lives there: the
// layers' matrices, the model's items and the tables; the graph, its stacks and the dropout keys
// stay on the host.
MemoryPlan plan(const HeteroProblem& problem, const HeteroModelLayout& model, const OptimizerConfig& optimizer,
                const kernels::Device& device) {
  const std::int64_t params = model.parameter_bytes();
  const bool adam = optimizer.kind == "adam" || optimizer.kind == "adamw";
  // The trainer's model trains on the training rows alone (HeteroModel::set_training_rows): its
  // logits and their gradient are those rows', counted among the activations.
  const std::vector<MemoryItem> model_items{
      {"training rows (the last layer's selection)", model.selection_bytes(problem.train.size)},
      {"features", model.feature_bytes()},
      {"activations", model.activation_bytes(problem.train.size)},
      {"parameters", params},
      {"gradients", params},
      {"optimizer state", adam ? 2 * params : (optimizer.momentum != 0.0f ? params : 0)}};
  MemoryPlan p;
  if (device.is_cuda()) {
    p.items.push_back({"graph operators (relation stacks and their transposes)", model.graph_bytes(problem.train)});
    // The loss's rows there: the training logits' during training, and each split's from the first
    // evaluation on (run_loop's prepared splits).
    const std::int64_t split_rows = 2 * problem.train.size + problem.valid.size + problem.test.size;
    p.items.push_back({"labels and splits (the loss's rows)", kernels::LossRows::device_bytes(split_rows, device)});
    p.items.insert(p.items.end(), model_items.begin(), model_items.end());
    p.items.push_back({"embedding tables", model.table_bytes()});
    p.items.push_back({cublas_workspace_item, planned_cublas_workspace_bytes()});
    return p;
  }
  p.items = {{"process before training", problem.process_bytes},
             {"graph (CSR, all relations) and its relation stacks", 2 * 12 * problem.graph_entries},
             {"graph operators (the layers' blocks, stacks and transposes)", model.graph_bytes(problem.train)}};
  p.items.insert(p.items.end(), model_items.begin(), model_items.end());
  p.items.push_back({"embedding tables and other host state", model.host_bytes()});
  return p;
}

// The vertex types whose inputs never reach the target's logits within `layers` layers (each
// layer carries a relation's source into its destination): their relations all lead away from
// the target, as acm's paper -> subject does without its reverse.
std::vector<std::string> unreached_types(const RgcnGraph& g, int target, int layers) {
  std::vector<char> reached(static_cast<std::size_t>(g.num_vertex_types()), 0);
  reached[static_cast<std::size_t>(target)] = 1;
  for (int layer = 0; layer < layers; ++layer) {
    std::vector<char> next = reached;
    for (int r = 0; r < g.num_relations(); ++r)
      if (reached[static_cast<std::size_t>(g.relation_dst(r))] != 0) next[static_cast<std::size_t>(g.relation_src(r))] = 1;
    reached = std::move(next);
  }
  std::vector<std::string> names;
  for (int t = 0; t < g.num_vertex_types(); ++t)
    if (reached[static_cast<std::size_t>(t)] == 0) names.push_back(g.vertex_type_name(t));
  return names;
}

// Says, once per job, which types the model cannot hear from and how to let them in.
void warn_unreached_types(const HeteroProblem& p, const std::string& kind, int layers) {
  const std::vector<std::string> names = unreached_types(*p.graph, p.target, layers);
  if (names.empty() || p.comm->rank() != 0) return;
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
  log_warning(fmt::format("{}: within {} layer{} no relation carries the vertex type{} {} to '{}' (the relations "
                          "point away from it), so {} unused; the reverse relations let {} in "
                          "(--add-reverse-relations of halo-train or of halo-convert ogb)",
                          kind, layers, layers == 1 ? "" : "s", names.size() == 1 ? "" : "s", list,
                          p.graph->vertex_type_name(p.target), names.size() == 1 ? "its input goes" : "their inputs go",
                          names.size() == 1 ? "it" : "them"));
}

// What heterogeneous training refuses on every device (UnsupportedError naming it).
void check_input_settings(const TrainConfig& c) {
  if (c.boundary_sample_rate < 1.0 || c.precompute_first_aggregation)
    throw UnsupportedError("train: boundary sampling and a precomputed first aggregation are not available for "
                           "heterogeneous models (rgcn, hgt, rgat)");
}

// The model's table_stream_budget: --feature-memory-budget when given (the features of featured
// types stay resident; the tables are R-GCN's streamed input); on a GPU, also when the tables,
// their gradients and Adam moments would take more than half of the GPU memory the features
// leave, then with a sixteenth of the GPU's memory for their staging; else 0 (resident).
std::int64_t table_stream_budget(const HeteroProblem& problem, const HeteroModelConfig& m, const TrainConfig& c) {
  if (c.feature_memory_budget > 0) {
    if (m.kind != "rgcn")
      throw UnsupportedError("train: --feature-memory-budget streams R-GCN's embedding tables; " + m.kind +
                             " keeps its tables resident");
    return c.feature_memory_budget;
  }
  if (m.kind != "rgcn") return 0;
  if (!c.device.is_cuda()) return 0;
  std::int64_t tables = 0;
  for (int t = 0; t < problem.graph->num_vertex_types(); ++t)
    if (problem.feature_widths[static_cast<std::size_t>(t)] == 0)
      tables += EmbeddingTable::bytes_for(problem.graph->num_outputs(t), m.embedding_dim);
  const std::int64_t gpu = c.memory_limit > 0 ? c.memory_limit : gpu_memory_bytes(c.device);
  if (gpu < 0 || tables <= (gpu - feature_bytes(problem)) / 2) return 0;
  return gpu / 16;
}

// The model's settings as trained: its table_stream_budget decided.
HeteroModelConfig settings_as_trained(const HeteroProblem& problem, const HeteroModelConfig& model_config,
                                      const TrainConfig& config) {
  HeteroModelConfig settings = model_config;
  settings.table_stream_budget = table_stream_budget(problem, model_config, config);
  return settings;
}

HeteroModelLayout layout_of(const HeteroProblem& problem, const HeteroModelConfig& settings,
                            const TrainConfig& config) {
  return HeteroModelLayout(settings, *problem.graph, problem.feature_widths, problem.target, problem.num_classes,
                           config.device, problem.halo_types, problem.bf16_features);
}

// What one process knows of `ds` before training: everything of the problem but its inputs'
// builder, its communicator and the process's bytes.
void describe(const datasets::Dataset& ds, const RgcnGraph& graph, const TrainConfig& config, HeteroProblem& problem) {
  const graph::HeteroGraph& g = ds.hetero;
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    const datasets::NodeType& type = ds.node_type(g.vertex_type_name(t));
    problem.feature_widths.push_back(type.has_features() ? type.feature_dim() : 0);
    const datasets::FeatureDType stored =
        type.has_features() ? node_type_features(type).stored_dtype() : datasets::FeatureDType::float32;
    if (type.has_features()) problem.feature_dtype = datasets::to_string(stored);
    // bfloat16 features may stay so (the layout decides), unless each row is to be normalised.
    problem.bf16_features.push_back(!config.normalize_features && stored == datasets::FeatureDType::bfloat16 ? 1 : 0);
  }
  problem.name = ds.meta.name;
  problem.num_nodes = ds.num_vertices();
  problem.num_edges = ds.num_edges();
  problem.target_type = ds.meta.target_type;
  problem.num_classes = ds.meta.num_classes;
  problem.graph = &graph;
  problem.target = g.vertex_type(ds.meta.target_type);
  problem.labels = ds.target().labels.data();
  problem.target_count = ds.target().count;
  problem.train = kernels::view_of(ds.split.train);
  problem.valid = kernels::view_of(ds.split.valid);
  problem.test = kernels::view_of(ds.split.test);
  problem.graph_entries = ds.num_edges();
}

}  // namespace

void check_hetero_settings(const TrainConfig& c) {
  // Its ranks' halo exchanges and embedding tables are host-side: refused before anything of the
  // partition is read or placed on the GPU.
  if (c.device.is_cuda())
    throw UnsupportedError("train: distributed R-GCN trains on the cpu only, not on " +
                           c.device.to_string() +
                           "; one GPU trains a whole dataset (halo-train --dataset DIR --model rgcn --device cuda)");
  if (c.feature_memory_budget > 0)
    throw UnsupportedError("train: streamed embedding tables (--feature-memory-budget) are not "
                           "available on the ranks of a distributed R-GCN");
  check_input_settings(c);
}

FeatureSource node_type_features(const datasets::NodeType& type) {
  HALO_EXPECTS(type.has_features(), "vertex type '" + type.name + "' has no features");
  return type.half_features.empty() ? FeatureSource::borrow(type.features) : FeatureSource::borrow(type.half_features);
}

TrainSummary train_hetero_problem(HeteroProblem& problem, const HeteroModelConfig& model_config, const TrainConfig& config,
                                const EpochCallback& on_epoch) {
  ThreadScope threads(config.threads);
  kernels::reset_tensor_peak_bytes(config.device);
  kernels::reset_device_peak_bytes(config.device);
  warn_unreached_types(problem,
                       model_config.kind == "hgt" ? "HGT" : model_config.kind == "rgat" ? "RGAT" : "R-GCN",
                       model_config.layers);
  const HeteroModelConfig settings = settings_as_trained(problem, model_config, config);
  // The plan is made and checked from the model's layout before its inputs, parameters, tables,
  // activations or matrices exist.
  const HeteroModelLayout layout = layout_of(problem, settings, config);
  if (settings.table_stream_budget > 0) {
    std::string tables;
    for (int t = 0; t < problem.graph->num_vertex_types(); ++t)
      if (layout.streams(t))
        tables += fmt::format("{}{} ({} rows a chunk)", tables.empty() ? "" : ", ", problem.graph->vertex_type_name(t),
                              layout.table_chunk_rows(t));
    if (!tables.empty())
      log_info(fmt::format("embedding tables streamed from host memory through {} of staging on {}: {}",
                           format_bytes(layout.table_bytes()), config.device.to_string(), tables));
  }

  TrainSummary summary;
  summary.feature_streaming.feature_dtype = problem.feature_dtype;
  summary.feature_streaming.feature_bytes = feature_bytes(problem);
  summary.memory_plan = plan(problem, layout, config.optimizer, config.device);
  const std::string where = config.device.is_cuda() ? " on " + config.device.to_string() : "";
  log_and_check_memory_plan(summary.memory_plan, config, device_memory_available(config.device));
  bool has_tables = false;
  for (int t = 0; t < problem.graph->num_vertex_types(); ++t) has_tables = has_tables || layout.has_table(t);
  if (!config.checkpoint_dir.empty() && has_tables && problem.comm->size() > 1)
    throw UnsupportedError("train: checkpoints of distributed R-GCN models with embedding tables are not "
                           "supported yet (each rank holds its own rows of the tables; rank 0 writes checkpoints)");

  // From here on an allocation that fails is one the plan did not foresee: say so with its numbers.
  return under_memory_plan(summary.memory_plan, where, config.device, [&] {
    if (problem.build_inputs) problem.build_inputs(problem, layout);
    LoopContext context{config, *problem.comm};
    context.labels = problem.labels;
    context.train = problem.train;
    context.valid = problem.valid;
    context.test = problem.test;
    context.prediction_ids = problem.target_ids;
    context.prediction_rows = problem.target_count;
    context.fingerprint = fingerprint(problem, model_config, config);
    count_splits(context);
    auto make_model = [&](int /*run*/, std::uint64_t seed) -> std::unique_ptr<Trainable> {
      return std::make_unique<HeteroTrainable>(HeteroModel(settings, *problem.graph, problem.features, problem.target,
                                                           problem.num_classes, seed, config.device, problem.halo,
                                                           problem.features_bf16));
    };
    run_all(context, make_model, problem.graph->num_outputs(problem.target), on_epoch, summary);
    summary.device = config.device;
    return std::move(summary);
  });
}

TrainSummary train_hetero(const datasets::Dataset& ds, const HeteroModelConfig& model_config, const TrainConfig& config,
                        const EpochCallback& on_epoch) {
  check_train_config(config);
  check_inputs(ds);
  check_input_settings(config);
  kernels::require_device(config.device);
  const std::int64_t process_bytes = std::max<std::int64_t>(0, process_bytes_besides_arrays());
  const graph::HeteroGraph& g = ds.hetero;
  const RgcnGraph graph(g);
  HeteroProblem problem;
  describe(ds, graph, config, problem);
  // Each vertex type's features (widened, normalised when asked, or kept in bfloat16) on the
  // device, or none: an embedding table.
  std::vector<kernels::Tensor> features(static_cast<std::size_t>(g.num_vertex_types()));
  std::vector<kernels::Bf16Rows> features_bf16(static_cast<std::size_t>(g.num_vertex_types()));
  problem.build_inputs = [&](HeteroProblem& p, const HeteroModelLayout& layout) {
    p.features_bf16.assign(static_cast<std::size_t>(g.num_vertex_types()), nullptr);
    for (int t = 0; t < g.num_vertex_types(); ++t) {
      const auto ts = static_cast<std::size_t>(t);
      const datasets::NodeType& type = ds.node_type(g.vertex_type_name(t));
      if (!type.has_features()) {
        p.features.push_back(nullptr);
        continue;
      }
      const FeatureSource source = node_type_features(type);
      if (layout.keeps_bf16(t)) {
        features_bf16[ts] = kernels::Bf16Rows::empty(source.rows(), source.cols(), config.device);
        source.copy_to(features_bf16[ts]);
        p.features.push_back(nullptr);
        p.features_bf16[ts] = &features_bf16[ts];
        continue;
      }
      kernels::Tensor& x = features[static_cast<std::size_t>(t)];
      x = kernels::Tensor::empty(source.rows(), source.cols(), config.device);
      source.copy_to(x.view());
      if (config.normalize_features) kernels::normalize_rows(x.view());
      p.features.push_back(&x);
    }
  };
  dist::LocalCommunicator local;
  problem.comm = &local;
  problem.process_bytes = process_bytes;
  return train_hetero_problem(problem, model_config, config, on_epoch);
}

MemoryPlan plan_hetero(const datasets::Dataset& ds, const HeteroModelConfig& model_config, const TrainConfig& config) {
  check_train_config(config);
  check_inputs(ds);
  check_input_settings(config);
  const RgcnGraph graph(ds.hetero);
  HeteroProblem problem;
  describe(ds, graph, config, problem);
  problem.process_bytes = std::max<std::int64_t>(0, process_bytes_besides_arrays());
  const HeteroModelConfig settings = settings_as_trained(problem, model_config, config);
  return plan(problem, layout_of(problem, settings, config), config.optimizer, config.device);
}

}  // namespace halo::train::detail
