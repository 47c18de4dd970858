// GCN / GraphSAGE on a rank: opens this rank's part, checks it, and runs the trainer loop on it.
#include "train/dist/detail/part_trainers.hpp"

#include <chrono>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "partition/partition_dir.hpp"
#include "train/detail/homogeneous_trainer.hpp"
#include "train/dist/halo_aggregation.hpp"
#include "train/dist/halo_exchange.hpp"
#include "train/memory_plan.hpp"
#include "train/training_problem.hpp"

namespace halo::train::dist::detail {
namespace {

// Labels per vertex: one class, or a multi-label task's binary tasks.
std::int64_t label_columns(const partition::Part& part) {
  return part.meta.task == datasets::Task::multilabel ? part.meta.num_tasks : 1;
}

// The target vertex type of a part: the only one of a homogeneous dataset.
const datasets::NodeType& target_rows(const partition::Part& part, const std::string& dir) {
  HALO_EXPECTS(!part.meta.is_hetero, "partition " + dir + " is of a heterogeneous dataset ('" + part.meta.name +
                                         "'); train it with --model rgcn");
  HALO_EXPECTS(part.node_types.size() == 1, "partition " + dir + ": expected one vertex type, found " +
                                                std::to_string(part.node_types.size()));
  const datasets::NodeType& t = part.node_types.front();
  HALO_EXPECTS(t.has_features(), "partition " + dir + ": dataset '" + part.meta.name + "' has no node features");
  const std::int64_t per_vertex = label_columns(part);
  HALO_EXPECTS(t.labels.rows() == t.count && t.labels.cols() == per_vertex,
               fmt::format("partition {}: needs {} label(s) per owned vertex ({}), has {} x {}", dir, per_vertex, t.count,
                           t.labels.rows(), t.labels.cols()));
  HALO_EXPECTS(part.meta.num_classes >= 2, "partition " + dir + ": dataset '" + part.meta.name + "' has " +
                                               std::to_string(part.meta.num_classes) + " classes, expected >= 2");
  return t;
}

}  // namespace

TrainSummary train_homogeneous_part(const std::string& partition_dir, Communicator& comm, const ModelConfig& model,
                                    const TrainConfig& config, const EpochCallback& on_epoch) {
  const auto start = std::chrono::steady_clock::now();
  const partition::PartitionDirInfo info = partition::read_partition_info(partition_dir);
  const partition::Part part = read_rank_part(partition_dir, info, comm, config.verify_checksums);
  const datasets::NodeType& target = target_rows(part, partition_dir);
  log_info(fmt::format("rank {} of {}: part of {} owned and {} halo vertices, {} edges, read in {:.2f} s", comm.rank(),
                       comm.size(), part.graph.num_owned, part.graph.num_halo, part.graph.graph().num_edges(),
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
  std::optional<HaloExchange> exchange;
  std::optional<GraphOperators> operators;

  TrainingProblem problem;
  const bool multilabel = part.meta.task == datasets::Task::multilabel;
  problem.shape = {part.meta.name, info.quality.num_vertices, info.quality.num_edges, target.feature_dim(),
                   multilabel ? part.meta.num_tasks : part.meta.num_classes};
  if (multilabel) problem.tasks = part.meta.num_tasks;
  if (target.half_features.empty())
    problem.features = &target.features;
  else
    problem.half_features = &target.half_features;
  problem.labels = &target.labels;
  problem.train = kernels::view_of(part.split.train);
  problem.valid = kernels::view_of(part.split.valid);
  problem.test = kernels::view_of(part.split.test);
  problem.global_ids = {part.graph.local_to_global.data(), part.graph.num_owned};
  problem.comm = &comm;
  problem.plan_memory = [&](const ModelShape& m) { return plan_part_training_memory(part, m, config.optimizer); };
  problem.build_operators = [&](TrainingProblem& p) {
    exchange.emplace(part.graph, comm);
    operators.emplace(build_part_operators(part.graph, model.kind, *exchange, config.device));
    p.exchange = &*exchange;
    p.operators = &*operators;
  };
  return train::detail::train_homogeneous_problem(problem, model, config, on_epoch);
}

}  // namespace halo::train::dist::detail
