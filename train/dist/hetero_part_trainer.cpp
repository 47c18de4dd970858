// R-GCN on a rank: opens this rank's part of a heterogeneous partition, exchanges the
// features' halo rows once, and trains with one halo exchange per vertex type.
#include "train/dist/detail/part_trainers.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "kernels/elementwise.hpp"
#include "partition/partition_dir.hpp"
#include "train/detail/hetero_problem.hpp"
#include "train/detail/run_loop.hpp"
#include "train/dist/halo_exchange.hpp"
#include "train/dist/rgcn_part.hpp"
#include "train/memory_plan.hpp"

namespace halo::train::dist::detail {
namespace {

// The part's rows of one split, renumbered from the part's owned rows to the target type's.
Array<std::int64_t> target_rows(const Array<std::int64_t>& rows, std::int64_t first, std::int64_t count,
                                const std::string& dir) {
  auto out = Array<std::int64_t>::vector(rows.size());
  for (std::int64_t i = 0; i < rows.size(); ++i) {
    out[i] = rows[i] - first;
    HALO_EXPECTS(out[i] >= 0 && out[i] < count, fmt::format("partition {}: split row {} is not a labelled vertex "
                                                            "of the part",
                                                            dir, rows[i]));
  }
  return out;
}

}  // namespace

TrainSummary train_hetero_part(const std::string& partition_dir, Communicator& comm, const HeteroModelConfig& model,
                             const TrainConfig& config, const EpochCallback& on_epoch) {
  const auto start = std::chrono::steady_clock::now();
  train::detail::check_train_config(config);
  train::detail::check_hetero_settings(config);
  const std::int64_t process_bytes = std::max<std::int64_t>(0, process_bytes_besides_arrays());
  const partition::PartitionDirInfo info = partition::read_partition_info(partition_dir);
  const partition::Part part = read_rank_part(partition_dir, info, comm, config.verify_checksums);
  HALO_EXPECTS(part.meta.is_hetero, "partition " + partition_dir + " is of a homogeneous dataset ('" + part.meta.name +
                                        "'); train it with --model gcn or sage");
  HALO_EXPECTS(part.meta.task == datasets::Task::multiclass,
               "partition " + partition_dir + ": dataset '" + part.meta.name + "' has a " +
                   datasets::to_string(part.meta.task) + " task; only multiclass training is supported");
  HALO_EXPECTS(part.meta.num_classes >= 2, "partition " + partition_dir + ": dataset '" + part.meta.name + "' has " +
                                               std::to_string(part.meta.num_classes) + " classes, expected >= 2");
  const RgcnPart rp = rgcn_part(part, info);
  const RgcnGraph graph = rp.graph();
  const int types = graph.num_vertex_types();
  const auto target = static_cast<int>(
      std::find(rp.type_names.begin(), rp.type_names.end(), part.meta.target_type) - rp.type_names.begin());
  HALO_EXPECTS(target < types, "partition " + partition_dir + ": no vertex type '" + part.meta.target_type + "'");
  const datasets::NodeType& labelled = part.node_types[static_cast<std::size_t>(target)];
  HALO_EXPECTS(labelled.labels.size() == labelled.count && labelled.labels.cols() == 1,
               fmt::format("partition {}: needs one label per owned '{}' vertex ({}), has {}", partition_dir,
                           labelled.name, labelled.count, labelled.labels.size()));

  train::detail::HeteroProblem problem;
  // Each type's feature width is the dataset's (partition.json), the same on every rank: a part
  // may own no vertex of a type that has features, and its file of them then has no rows.
  const auto width_of = [&](int t) { return info.node_types.at(static_cast<std::size_t>(t)).feature_dim; };
  for (int t = 0; t < types; ++t) {
    const datasets::NodeType& type = part.node_types[static_cast<std::size_t>(t)];
    problem.feature_widths.push_back(width_of(t));
    if (type.has_features())
      problem.feature_dtype = datasets::to_string(train::detail::node_type_features(type).stored_dtype());
    problem.halo_types.push_back(1);  // every type has an exchange on every rank
  }
  // Built once the plan has passed: one exchange per type on every rank (the exchanges are
  // collective, so a rank without halo rows of a type still serves its peers), and the features
  // of every type that has them, with their halo rows filled once.
  std::vector<std::unique_ptr<HaloExchange>> exchanges;
  HeteroHaloRows halo;
  std::vector<kernels::Tensor> features(static_cast<std::size_t>(types));
  problem.build_inputs = [&](train::detail::HeteroProblem& p, const HeteroModelLayout& /*widened: no bfloat16*/) {
    for (int t = 0; t < types; ++t) {
      const auto ts = static_cast<std::size_t>(t);
      exchanges.push_back(std::make_unique<HaloExchange>(rp.exchange_graphs[ts], comm));
      halo.exchanges.push_back(exchanges.back().get());
      halo.global_ids.push_back(kernels::view_of(rp.global_ids[ts]));
    }
    halo.type_offsets = rp.type_offsets;
    p.halo = &halo;
    for (int t = 0; t < types; ++t) {
      const auto ts = static_cast<std::size_t>(t);
      const datasets::NodeType& type = part.node_types[ts];
      if (width_of(t) == 0) {
        p.features.push_back(nullptr);
        continue;
      }
      // The owned rows widened into the input rows' first ones (none where the part owns no vertex
      // of the type); the halo rows from their owners.
      kernels::Tensor& x = features[ts];
      x = kernels::Tensor::empty(graph.num_inputs(t), width_of(t), config.device);
      if (type.has_features()) {
        train::detail::node_type_features(type).copy_to(x.view().slice_rows(0, graph.num_outputs(t)));
        if (config.normalize_features) kernels::normalize_rows(x.view().slice_rows(0, graph.num_outputs(t)));
      }
      exchanges[ts]->forward(x.view());
      exchanges[ts]->reset_stats();
      p.features.push_back(&x);
    }
  };
  const std::int64_t first = rp.owned_offsets[static_cast<std::size_t>(target)];
  const Array<std::int64_t> train = target_rows(part.split.train, first, labelled.count, partition_dir);
  const Array<std::int64_t> valid = target_rows(part.split.valid, first, labelled.count, partition_dir);
  const Array<std::int64_t> test = target_rows(part.split.test, first, labelled.count, partition_dir);
  // The owned rows of the labelled type by their index among all its vertices (predictions).
  const auto target_slot = static_cast<std::size_t>(target);
  Array<std::int64_t> target_ids = Array<std::int64_t>::vector(labelled.count);
  for (std::int64_t k = 0; k < labelled.count; ++k)
    target_ids[k] = rp.global_ids[target_slot][k] - rp.type_offsets[target_slot];
  std::int64_t entries = 0;
  for (const graph::CsrGraph& r : rp.relations) entries += r.num_edges();
  log_info(fmt::format("rank {} of {}: part of {} owned and {} halo vertices, {} entries, ready in {:.2f} s",
                       comm.rank(), comm.size(), part.graph.num_owned, part.graph.num_halo, entries,
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));

  problem.name = part.meta.name;
  problem.num_nodes = info.quality.num_vertices;
  problem.num_edges = info.quality.num_edges;
  problem.target_type = part.meta.target_type;
  problem.num_classes = part.meta.num_classes;
  problem.graph = &graph;
  problem.target = target;
  problem.labels = labelled.labels.data();
  problem.train = kernels::view_of(train);
  problem.valid = kernels::view_of(valid);
  problem.test = kernels::view_of(test);
  problem.target_ids = kernels::view_of(target_ids);
  problem.target_count = rp.type_offsets[target_slot + 1] - rp.type_offsets[target_slot];
  problem.comm = &comm;
  problem.graph_entries = entries;
  problem.process_bytes = process_bytes;
  return train::detail::train_hetero_problem(problem, model, config, on_epoch);
}

}  // namespace halo::train::dist::detail
