// The trainer's set-up of the first layer's input: the plan with the features placed (in host
// memory or on a GPU), the refusals, the options and the report.
#include "train/features/detail/feature_setup.hpp"

#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "kernels/cuda/gpu_info.hpp"

namespace halo::train::detail {
namespace {

// The item of the plan (train/memory_plan.cpp) that a run on a GPU keeps on the host.
constexpr const char* stored_graph_item = "graph (CSR)";

}  // namespace

FeatureSource problem_features(const TrainingProblem& problem) {
  HALO_EXPECTS((problem.features != nullptr) != (problem.half_features != nullptr),
               "the training problem needs its features in float32 or in 16 bits, not both");
  return problem.features != nullptr ? FeatureSource::borrow(*problem.features)
                                     : FeatureSource::borrow(*problem.half_features);
}

FeaturePassStats passes_since(const FeaturePassStats& before, const FeaturePassStats& now) {
  FeaturePassStats d;
  d.passes = now.passes - before.passes;
  d.chunks = now.chunks - before.chunks;
  d.bytes_to_device = now.bytes_to_device - before.bytes_to_device;
  d.bytes_from_source = now.bytes_from_source - before.bytes_from_source;
  d.cache_hits = now.cache_hits - before.cache_hits;
  d.cache_misses = now.cache_misses - before.cache_misses;
  d.wait_seconds = now.wait_seconds - before.wait_seconds;
  d.compute_seconds = now.compute_seconds - before.compute_seconds;
  d.fill_seconds = now.fill_seconds - before.fill_seconds;
  return d;
}

FeaturePlacement plan_memory(TrainingProblem& problem, const ModelShape& model, const TrainConfig& config,
                             std::int64_t process_bytes, std::int64_t available, MemoryPlan& plan) {
  const FeatureSource x = problem_features(problem);
  MemoryPlan resident = problem.plan_memory(model);
  resident.items.insert(resident.items.begin(), {"process before training", process_bytes});
  const std::int64_t input_bytes = model.input_activation_bytes(x.rows());
  const std::int64_t precomputed = config.precompute_first_aggregation ? 4 * x.rows() * x.cols() : 0;
  const bool kept = keeps_features_beside_aggregation(model.config());
  const FeaturePlacement placement =
      place_features(plan_feature_input(resident, input_bytes, {}, precomputed, kept).total_bytes(),
                     plan_feature_input(resident, input_bytes, {true, 0, 0}, precomputed).total_bytes(), x.rows(),
                     x.cols(), x.is_mapped(), config.feature_memory_budget, config.memory_limit, available);
  plan = plan_feature_input(std::move(resident), input_bytes, placement, precomputed, kept);
  return placement;
}

FeaturePlacement plan_gpu_memory(TrainingProblem& problem, const ModelShape& model, const TrainConfig& config,
                                 std::int64_t gpu_bytes, MemoryPlan& plan) {
  const FeatureSource x = problem_features(problem);
  MemoryPlan resident = problem.plan_memory(model);
  const std::int64_t input_bytes = model.input_activation_bytes(x.rows());
  // A precomputed Â·X lives on the GPU in place of resident features (beside them for GraphSAGE);
  // streamed, it is computed and kept in host memory and crosses the bus through the same staging
  // buffers and cache as X would.
  const std::int64_t precomputed = config.precompute_first_aggregation ? 4 * x.rows() * x.cols() : 0;
  const bool kept = keeps_features_beside_aggregation(model.config());
  // The source stays in host memory: no file pages are mapped on the GPU (mapped = false).
  const FeaturePlacement placement =
      place_features(gpu_memory_plan(plan_feature_input(resident, input_bytes, {}, precomputed, kept)).total_bytes(),
                     gpu_memory_plan(plan_feature_input(resident, input_bytes, {true, 0, 0}, 0)).total_bytes(),
                     x.rows(), x.cols(), false, config.feature_memory_budget, config.memory_limit, gpu_bytes);
  plan = gpu_memory_plan(
      plan_feature_input(std::move(resident), input_bytes, placement, placement.streamed ? 0 : precomputed, kept));
  return placement;
}

MemoryPlan gpu_memory_plan(MemoryPlan plan) {
  std::vector<MemoryItem> kept;
  for (MemoryItem& item : plan.items)
    if (item.name != stored_graph_item && item.name != cpu_spmm_panel_item) kept.push_back(std::move(item));
  kept.push_back({cublas_workspace_item, planned_cublas_workspace_bytes()});
  plan.items = std::move(kept);
  return plan;
}

std::int64_t gpu_memory_bytes(const kernels::Device& device) { return kernels::cuda::gpu_usable_bytes(device.index); }

void check_gpu_memory_plan(const MemoryPlan& plan, std::int64_t limit_bytes, const kernels::Device& device,
                           std::int64_t gpu_bytes) {
  check_memory_plan(plan, limit_bytes, -1);
  if (plan.total_bytes() > gpu_bytes)
    throw UnsupportedError(fmt::format(
        "memory plan: training on {} needs {} but the GPU has {} ({} bytes) free for it: {}", device.to_string(),
        format_bytes(plan.total_bytes()), format_bytes(gpu_bytes), gpu_bytes, plan.one_line()));
}

std::int64_t device_memory_available(const kernels::Device& device) {
  return device.is_cuda() ? gpu_memory_bytes(device) : machine_available_bytes();
}

void log_and_check_memory_plan(const MemoryPlan& plan, const TrainConfig& config, std::int64_t available) {
  const bool gpu = config.device.is_cuda();
  log_info(fmt::format("memory plan{}: {} needed (limit {}, {} {})", gpu ? " on " + config.device.to_string() : "",
                       format_bytes(plan.total_bytes()),
                       config.memory_limit > 0 ? format_bytes(config.memory_limit) : std::string("none"),
                       gpu ? "free on the GPU" : "available",
                       available >= 0 ? format_bytes(available) : std::string("unknown")));
  log_debug("memory plan:\n" + plan.table());
  if (gpu)
    check_gpu_memory_plan(plan, config.memory_limit, config.device, available);
  else
    check_memory_plan(plan, config.memory_limit, available);
}

bool plan_fits(const MemoryPlan& plan, std::int64_t limit_bytes, std::int64_t available) {
  const std::int64_t total = plan.total_bytes();
  return (limit_bytes <= 0 || total <= limit_bytes) && (available < 0 || total <= available);
}

void log_activation_savings(const ModelShape& model, const FeaturePlacement& placement) {
  std::vector<int> in_place, while_reading, recomputed, bf16_outputs, bf16_aggregations;
  for (int i = 0; i < model.layers(); ++i) {
    if (model.dropout(i) > 0.0f && model.drops_in_place(i)) in_place.push_back(i);
    const bool resident_input = !(i == 0 && placement.streamed);
    if (model.drops_while_reading(i) && resident_input) while_reading.push_back(i);
    if (model.recomputes_aggregation(i) && resident_input) recomputed.push_back(i);
    if (model.output_in_bf16(i)) bf16_outputs.push_back(i);
    if (model.aggregation_in_bf16(i) && resident_input) bf16_aggregations.push_back(i);
  }
  if (!bf16_outputs.empty())
    log_info(fmt::format("activations: the output of layer {} kept in bfloat16, widened for every product",
                         fmt::join(bf16_outputs, ", ")));
  if (!bf16_aggregations.empty())
    log_info(fmt::format("activations: Â·x of layer {} kept in bfloat16 for the weight's gradient",
                         fmt::join(bf16_aggregations, ", ")));
  if (model.recomputes_projection())
    log_info("activations: every gat layer computes x·W and its scores again in backward instead of keeping them");
  if (!in_place.empty())
    log_info(fmt::format("activations: the dropout of layer {} acts in place on the ReLU output before it",
                         fmt::join(in_place, ", ")));
  if (!while_reading.empty())
    log_info(
        fmt::format("activations: the dropout of layer {} acts on the input chunk by chunk as the layer reads "
                    "it, keeping no dropped copy",
                    fmt::join(while_reading, ", ")));
  if (!recomputed.empty())
    log_info(fmt::format("activations: layer {} computes Â·x again in backward instead of keeping it (one more "
                         "SpMM each, to fit the memory plan)",
                         fmt::join(recomputed, ", ")));
}

void check_feature_settings(const ModelConfig& m, const TrainConfig& config, const DatasetShape& shape,
                            std::int64_t stored_value_bytes) {
  // A precomputed Â·X streams as float32, whatever the features' storage.
  const std::int64_t streamed_value_bytes = config.precompute_first_aggregation ? 4 : stored_value_bytes;
  const std::int64_t minimum =
      2 * FeaturePipeline::staging_row_bytes(shape.feature_dim, streamed_value_bytes, config.device);
  const bool widened_there = minimum > 2 * 4 * shape.feature_dim;
  if (config.feature_memory_budget > 0 && config.feature_memory_budget < minimum)
    throw InvalidArgument(
        fmt::format("train: a feature_memory_budget of {} bytes cannot hold two staging buffers of "
                    "one feature row ({} floats{}): the minimum is {} bytes",
                    config.feature_memory_budget, shape.feature_dim,
                    widened_there ? ", and its 16-bit values that the GPU widens" : "", minimum));
  if (config.precompute_first_aggregation && m.kind == "gat")
    throw InvalidArgument("train: precompute_first_aggregation is for gcn and sage: graph attention weighs each "
                          "neighbour by scores of x · W, so its aggregation of x cannot be precomputed");
  if (config.precompute_first_aggregation && m.input_dropout != 0.0f)
    throw InvalidArgument(fmt::format("train: precompute_first_aggregation needs input dropout 0 (Â·X is constant "
                                      "only when nothing random touches X), got {}",
                                      m.input_dropout));
}

void log_streamed_first_layer(const ModelConfig& m, const TrainConfig& config, const ModelShape& model,
                              const FeaturePlacement& placement, const DatasetShape& shape) {
  if (placement.streamed && !config.precompute_first_aggregation && model.aggregates_first(0)) {
    const std::int64_t out = m.layers == 1 ? shape.num_classes : m.hidden;
    log_info(fmt::format("features streamed: the first {} layer transforms them first ({} inputs < {} outputs; in "
                         "memory it would aggregate first), so its aggregation carries {} columns; "
                         "--precompute-first-aggregation (with input dropout 0) would save that aggregation",
                         m.kind, shape.feature_dim, out, out));
  }
}

FeatureInputOptions feature_input_options(const ModelConfig& m, const TrainConfig& config,
                                          const FeaturePlacement& placement) {
  FeatureInputOptions o;
  o.streamed = placement.streamed;
  o.budget_bytes = placement.budget_bytes;
  o.normalize_rows = config.normalize_features;
  o.precompute_aggregation = config.precompute_first_aggregation;
  o.keep_features = keeps_features_beside_aggregation(m);
  o.device = config.device;
  return o;
}

std::vector<double> cache_scores(Aggregation* aggregation, const FeaturePlacement& placement) {
  // Every row is streamed once per pass, so the choice changes which rows cross, not how many.
  const auto* local = dynamic_cast<const LocalAggregation*>(aggregation);
  if (!placement.streamed || local == nullptr) return {};
  return degree_scores(local->matrix());
}

FeatureStreamingSummary describe_input(const FeatureInput& input, const FeaturePlacement& placement) {
  const FeatureSource& x = input.features();
  FeatureStreamingSummary f;
  f.feature_dtype = datasets::to_string(x.stored_dtype());
  f.streamed = input.streamed();
  f.precomputed_aggregation = input.precomputed();
  f.feature_bytes = 4 * x.rows() * x.cols();
  f.chunk_rows = input.chunk_rows();
  f.staging_bytes = input.staging_bytes();
  f.cache_rows = input.cache_rows();
  f.cache_bytes = input.cache_bytes();
  f.budget_bytes = placement.budget_bytes;
  f.cached_fraction = x.rows() > 0 ? static_cast<double>(f.cache_rows) / static_cast<double>(x.rows()) : 0.0;
  return f;
}

std::string input_line(const FeatureStreamingSummary& f) {
  const std::string aggregation = f.precomputed_aggregation ? ", first aggregation precomputed" : "";
  const std::string stored = f.feature_dtype == "f32" ? "" : ", stored as " + f.feature_dtype;
  if (!f.streamed) return "features: resident (" + format_bytes(f.feature_bytes) + stored + ")" + aggregation;
  return fmt::format("features: streamed ({}{}) in chunks of {} rows, staging {}, cache of {} rows ({:.1f} %, {}){}",
                     format_bytes(f.feature_bytes), stored, f.chunk_rows, format_bytes(f.staging_bytes), f.cache_rows,
                     100.0 * f.cached_fraction, format_bytes(f.cache_bytes), aggregation);
}

}  // namespace halo::train::detail
