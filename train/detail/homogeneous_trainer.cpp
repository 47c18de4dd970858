// train() for GCN, GraphSAGE and GAT, on the CPU or one GPU: the problem's checks, memory plan and
// first-layer input, then the shared loop (train/detail/run_loop.hpp) over a Model bound to that
// input.
#include "train/detail/homogeneous_trainer.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "kernels/tensor.hpp"
#include "train/detail/run_loop.hpp"
#include "train/dist/communicator.hpp"
#include "train/features/detail/feature_setup.hpp"
#include "train/features/feature_input.hpp"
#include "train/models/model_config.hpp"
#include "train/rank_plan.hpp"
#include "train/trainable.hpp"
#include "train/training_problem.hpp"

namespace halo::train::detail {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void check_trainable(const datasets::Dataset& ds) {
  HALO_EXPECTS(!ds.meta.is_hetero, "dataset '" + ds.meta.name + "' is heterogeneous; train it with --model " + heterogeneous_kinds);
  const datasets::NodeType& t = ds.target();
  HALO_EXPECTS(t.has_features(), "dataset '" + ds.meta.name + "' has no node features" +
                                        (ds.meta.task == datasets::Task::multilabel
                                             ? " (convert it with --node-features-from-edges if it has edge features)"
                                             : ""));
  const std::int64_t per_vertex = ds.meta.task == datasets::Task::multilabel ? ds.meta.num_tasks : 1;
  HALO_EXPECTS(t.labels.rows() == t.count && t.labels.cols() == per_vertex,
               fmt::format("dataset '{}' needs {} label(s) per vertex for {} vertices, has {} x {}", ds.meta.name,
                           per_vertex, t.count, t.labels.rows(), t.labels.cols()));
  HALO_EXPECTS(ds.meta.num_classes >= 2, "dataset '" + ds.meta.name + "' has " + std::to_string(ds.meta.num_classes) +
                                             " classes, expected >= 2");
  HALO_EXPECTS(ds.graph.num_rows() == t.count && ds.graph.num_cols() == t.count,
               fmt::format("the graph is {} x {}, the dataset has {} vertices", ds.graph.num_rows(), ds.graph.num_cols(),
                           t.count));
  HALO_EXPECTS(ds.split.train.size() > 0 && ds.split.valid.size() > 0 && ds.split.test.size() > 0,
               fmt::format("every split must be non-empty, got train {}, valid {}, test {}", ds.split.train.size(),
                           ds.split.valid.size(), ds.split.test.size()));
}

// A GCN / GraphSAGE Model bound to the first layer's input (resident or streamed features).
class FeatureModel : public Trainable {
 public:
  FeatureModel(Model model, FeatureInput& input) : model_(std::move(model)), input_(&input) {}
  kernels::Tensor forward(const Step& step) override { return model_.forward(input_->layer_input(), step); }
  void backward(kernels::Tensor grad_logits, const Step& step) override { model_.backward(std::move(grad_logits), step); }
  std::vector<Parameter*> parameters() override { return model_.parameters(); }
  std::vector<std::pair<std::string, kernels::Tensor*>> buffers() override { return model_.buffers(); }
  void zero_grad() override { model_.zero_grad(); }

 private:
  Model model_;
  FeatureInput* input_;
};

// A partitioned run on GPUs carries device buffers between ranks: its communicator must move them
// on the run's GPU (NcclCommunicator). Refused before the first epoch rather than staged via hosts;
// one rank with nothing to exchange needs no communicator.
void check_gpu_problem(const TrainingProblem& problem, const TrainConfig& config) {
  if (!config.device.is_cuda() || problem.comm->size() == 1 || problem.comm->device() == config.device) return;
  throw UnsupportedError(fmt::format(
      "train: distributed training on {} ({} ranks) needs a communicator of GPU buffers on that device (the "
      "NCCL communicator: halo-train under mpirun with --device cuda), got one of {} buffers",
      config.device.to_string(), problem.comm->size(), problem.comm->device().to_string()));
}

// num_classes is the logits' width: the classes, or for a multi-label task its binary tasks.
DatasetShape dataset_shape(const datasets::Dataset& ds) {
  const bool multilabel = ds.meta.task == datasets::Task::multilabel;
  return {ds.meta.name, ds.graph.num_rows(), ds.graph.num_edges(), ds.target().feature_dim(),
          multilabel ? ds.meta.num_tasks : ds.meta.num_classes};
}

// The problem of a whole dataset on one process, without its operators (built once the plan has
// passed). Borrows ds, config and comm.
TrainingProblem whole_dataset_problem(const datasets::Dataset& ds, const TrainConfig& config,
                                      dist::Communicator& comm) {
  const datasets::NodeType& target = ds.target();
  TrainingProblem problem;
  problem.shape = dataset_shape(ds);
  if (target.half_features.empty())
    problem.features = &target.features;
  else
    problem.half_features = &target.half_features;
  problem.labels = &target.labels;
  if (ds.meta.task == datasets::Task::multilabel) problem.tasks = ds.meta.num_tasks;
  problem.train = kernels::view_of(ds.split.train);
  problem.valid = kernels::view_of(ds.split.valid);
  problem.test = kernels::view_of(ds.split.test);
  problem.comm = &comm;
  problem.plan_memory = [&ds, &config](const ModelShape& shape) {
    return plan_training_memory(ds, shape, config.optimizer);
  };
  return problem;
}

}  // namespace

}  // namespace halo::train::detail

namespace halo::train {

std::string training_fingerprint(const DatasetShape& shape, const ModelConfig& m, const TrainConfig& c) {
  nlohmann::json j = detail::training_settings_json(c);
  j["dataset"] = {{"name", shape.name}, {"num_nodes", shape.num_nodes}, {"num_edges", shape.num_edges},
                  {"feature_dim", shape.feature_dim}, {"num_classes", shape.num_classes}};
  j["model"] = {{"kind", m.kind}, {"layers", m.layers}, {"hidden", m.hidden}, {"dropout", m.dropout},
                {"input_dropout", m.input_dropout}, {"batch_norm", m.batch_norm}, {"bias", m.bias},
                {"weight_decay", m.weight_decay}, {"weight_decay_first_layer_only", m.weight_decay_first_layer_only}};
  // Recorded only for attention, so checkpoints of the other kinds keep their fingerprint.
  if (m.kind == "gat")
    j["model"].update({{"heads", m.heads}, {"out_heads", m.out_heads}, {"attention_dropout", m.attention_dropout},
                       {"negative_slope", m.negative_slope}});
  // Recorded only when on, so checkpoints of GAT without it keep their fingerprint.
  if (m.residual) j["model"]["residual"] = true;
  // Recorded only when sampling, so checkpoints of exact training keep their fingerprint.
  if (c.boundary_sample_rate < 1.0) j["boundary_sample_rate"] = c.boundary_sample_rate;
  return j.dump();
}

std::string training_fingerprint(const datasets::Dataset& ds, const ModelConfig& m, const TrainConfig& c) {
  return training_fingerprint(detail::dataset_shape(ds), m, c);
}

}  // namespace halo::train

namespace halo::train::detail {

namespace {

// The run once its plan has passed and its operators exist: the first layer's input, the model
// of every run, and the loop.
TrainSummary train_planned(TrainingProblem& problem, const ModelConfig& model_config, const TrainConfig& config,
                           const FeaturePlacement& placement, TrainSummary summary, const EpochCallback& on_epoch) {
  const DatasetShape& shape = problem.shape;
  dist::Communicator& communicator = *problem.comm;
  // The first layer's aggregation, for a precomputed Â·X and the streaming cache's scores (GAT has
  // none: it attends instead).
  Aggregation* first_aggregation = model_config.kind == "gcn"    ? problem.operators->gcn.get()
                                   : model_config.kind == "sage" ? problem.operators->mean.get()
                                                                 : nullptr;
  FeatureInput input(detail::problem_features(problem), detail::feature_input_options(model_config, config, placement), first_aggregation,
                     detail::cache_scores(first_aggregation, placement));
  summary.feature_streaming = detail::describe_input(input, placement);
  log_info(detail::input_line(summary.feature_streaming));
  if (config.normalize_features) {
    // Row sums of signed features can be near zero, and dividing by them blows the row up; the
    // preprocessing is meant for counts (bag-of-words), so say so instead of training on noise.
    std::int64_t negative = input.has_negative_values() ? 1 : 0;
    negative = dist::all_reduce_value(communicator, negative);
    if (negative > 0) {
      log_warning("normalize_features: dataset '" + shape.name +
                  "' has negative features; row sums near zero will inflate their rows");
    }
  }
  detail::LoopContext context{config, communicator};
  context.exchange = problem.exchange;
  context.labels = problem.labels->data();
  context.tasks = problem.tasks;
  context.train = problem.train;
  context.valid = problem.valid;
  context.test = problem.test;
  context.global_ids = problem.global_ids;
  context.prediction_ids = problem.global_ids;
  context.prediction_rows = shape.num_nodes;
  context.fingerprint = training_fingerprint(shape, model_config, config);
  context.input = &input;
  detail::count_splits(context);
  auto make_model = [&](int /*run*/, std::uint64_t seed) -> std::unique_ptr<Trainable> {
    return std::make_unique<FeatureModel>(
        Model(model_config, shape.feature_dim, shape.num_classes, seed, *problem.operators, config.device), input);
  };
  const std::int64_t owned = problem.exchange != nullptr ? problem.exchange->num_owned() : input.features().rows();
  detail::run_all(context, make_model, owned, on_epoch, summary);
  summary.device = config.device;
  return summary;
}

}  // namespace

namespace {

// The plan train_homogeneous_problem checks: the features placed, and the model's recompute "auto"
// resolved (ModelShape::recompute_for).
struct ProblemPlan {
  MemoryPlan plan;
  FeaturePlacement placement;
  ModelConfig resolved;
};

ProblemPlan plan_problem(TrainingProblem& problem, const ModelConfig& model_config, const TrainConfig& config,
                         std::int64_t process_bytes, std::int64_t available) {
  const DatasetShape& shape = problem.shape;
  const auto plan = [&](const ModelShape& model, MemoryPlan& out) {
    return config.device.is_cuda() ? detail::plan_gpu_memory(problem, model, config, available, out)
                                   : detail::plan_memory(problem, model, config, process_bytes, available, out);
  };
  // Recompute "auto": planned keeping Â·x first, then recomputing it (one SpMM per aggregate-first
  // layer) when that would stream the features (a pass over them per epoch, slower GEMMs) or not fit.
  ProblemPlan out;
  out.resolved = model_config;
  if (out.resolved.recompute == "auto") out.resolved.recompute = "none";
  out.placement = plan(ModelShape(out.resolved, shape.feature_dim, shape.num_classes, config.device), out.plan);
  const std::string chosen =
      ModelShape(model_config, shape.feature_dim, shape.num_classes, config.device)
          .recompute_for(out.placement.streamed || !detail::plan_fits(out.plan, config.memory_limit, available));
  if (chosen != out.resolved.recompute) {
    out.resolved.recompute = chosen;
    out.placement = plan(ModelShape(out.resolved, shape.feature_dim, shape.num_classes, config.device), out.plan);
  }
  return out;
}

// Every rank plans its own part against its own memory, but two of its choices change its
// collectives (train::RankChoices), so the ranks agree on them: where one rank streams or
// recomputes, every rank does, a rank that differs planning again with configs_as_agreed. Two
// all-reduces of two flags; the second checks the agreement. (halo-train --plan-only plans the
// ranks alike: agree_rank_plans.)
ProblemPlan agree_across_ranks(TrainingProblem& problem, const ModelConfig& model_config, const TrainConfig& config,
                               std::int64_t process_bytes, std::int64_t available, ProblemPlan planned) {
  dist::Communicator& comm = *problem.comm;
  if (comm.size() == 1) return planned;
  const auto flags = [](const RankChoices& c) {
    return std::vector<std::int64_t>{c.stream ? 1 : 0, c.recompute ? 1 : 0};
  };
  const RankChoices own = RankChoices::of(planned.placement, planned.resolved.recompute);
  std::vector<std::int64_t> any = flags(own);
  dist::all_reduce(comm, any);
  const RankChoices agreed{any[0] > 0, any[1] > 0};
  if (own != agreed) {
    const FeatureSource x = problem_features(problem);
    const AgreedConfigs c =
        configs_as_agreed(ModelShape(model_config, problem.shape.feature_dim, problem.shape.num_classes, config.device),
                          config, own, agreed, x.rows(), x.cols());
    log_info(fmt::format("rank {} of {}: {}, as another rank must", comm.rank(), comm.size(),
                         agreed.stream && !own.stream ? "features streamed (under a budget that holds them whole)"
                                                      : "recompute '" + c.model.recompute + "'"));
    planned = plan_problem(problem, c.model, c.train, process_bytes, available);
  }
  std::vector<std::int64_t> count = flags(RankChoices::of(planned.placement, planned.resolved.recompute));
  dist::all_reduce(comm, count);
  for (const std::int64_t n : count) HALO_ASSERT(n == 0 || n == comm.size());
  return planned;
}

}  // namespace

TrainSummary train_homogeneous_problem(TrainingProblem& problem, const ModelConfig& model_config,
                                       const TrainConfig& config, const EpochCallback& on_epoch) {
  detail::check_train_config(config);
  HALO_EXPECTS((problem.features != nullptr || problem.half_features != nullptr) && problem.labels != nullptr &&
                   (problem.operators != nullptr || problem.build_operators) && problem.comm != nullptr &&
                   problem.plan_memory,
               "the training problem is incomplete");
  check_gpu_problem(problem, config);
  kernels::require_device(config.device);
  const std::int64_t process_bytes =
      problem.process_bytes >= 0 ? problem.process_bytes : std::max<std::int64_t>(0, process_bytes_besides_arrays());
  ThreadScope threads(config.threads);
  kernels::reset_tensor_peak_bytes(config.device);
  kernels::reset_device_peak_bytes(config.device);
  const DatasetShape& shape = problem.shape;
  detail::check_feature_settings(model_config, config, shape, problem.half_features != nullptr ? 2 : 4);
  // The plan is made and checked from the model's shape before its operators, parameters or
  // activations exist. On a GPU it is of the GPU's memory: the features are resident there, or
  // streamed to it.
  const bool gpu = config.device.is_cuda();
  const std::string where = gpu ? " on " + config.device.to_string() : "";
  const std::int64_t available = detail::device_memory_available(config.device);
  TrainSummary summary;
  ProblemPlan planned = agree_across_ranks(problem, model_config, config, process_bytes, available,
                                           plan_problem(problem, model_config, config, process_bytes, available));
  summary.memory_plan = std::move(planned.plan);
  const ModelConfig& resolved = planned.resolved;
  const FeaturePlacement& placement = planned.placement;
  const ModelShape model_shape(resolved, shape.feature_dim, shape.num_classes, config.device);
  summary.recompute = resolved.recompute;
  detail::log_and_check_memory_plan(summary.memory_plan, config, available);
  detail::log_activation_savings(model_shape, placement);
  detail::log_streamed_first_layer(resolved, config, model_shape, placement, shape);
  // From here on an allocation that fails is one the plan did not foresee: say so with its numbers.
  const MemoryPlan checked = summary.memory_plan;  // summary moves into the run
  return under_memory_plan(checked, where, config.device, [&] {
    if (problem.build_operators) problem.build_operators(problem);
    HALO_ASSERT(problem.operators != nullptr);
    return train_planned(problem, resolved, config, placement, std::move(summary), on_epoch);
  });
}

TrainSummary train_homogeneous(const datasets::Dataset& ds, const ModelConfig& model_config,
                               const TrainConfig& config, const EpochCallback& on_epoch) {
  detail::check_train_config(config);
  check_trainable(ds);
  std::optional<GraphOperators> operators;
  dist::LocalCommunicator local;
  TrainingProblem problem = whole_dataset_problem(ds, config, local);
  problem.build_operators = [&](TrainingProblem& p) {
    const Clock::time_point start = Clock::now();
    operators.emplace(build_graph_operators(ds.graph, model_config.kind, config.device));
    log_info(fmt::format("{} graph operators of {} vertices and {} edges built on {} in {:.2f} s", model_config.kind,
                         ds.graph.num_rows(), ds.graph.num_edges(), config.device.to_string(), seconds_since(start)));
    p.operators = &*operators;
  };
  return train_homogeneous_problem(problem, model_config, config, on_epoch);
}

RankPlan plan_homogeneous(const datasets::Dataset& ds, const ModelConfig& model, const TrainConfig& config,
                          std::int64_t memory_bytes) {
  detail::check_train_config(config);
  check_trainable(ds);
  dist::LocalCommunicator local;
  TrainingProblem problem = whole_dataset_problem(ds, config, local);
  detail::check_feature_settings(model, config, problem.shape, problem.half_features != nullptr ? 2 : 4);
  ProblemPlan planned =
      plan_problem(problem, model, config, std::max<std::int64_t>(0, process_bytes_besides_arrays()), memory_bytes);
  RankPlan out;
  out.fits = detail::plan_fits(planned.plan, config.memory_limit, memory_bytes);
  out.plan = std::move(planned.plan);
  out.placement = planned.placement;
  out.recompute = planned.resolved.recompute;
  return out;
}

}  // namespace halo::train::detail
