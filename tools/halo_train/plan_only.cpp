// halo-train --plan-only: part counts (partition::part_sizes / estimate_part_sizes), each rank's
// plan from them (train::plan_rank), its halo traffic (train::halo_bytes_per_epoch), printed and
// written as JSON; a dataset's one-process plan as training makes it (train::plan_homogeneous,
// or from a heterogeneous model's layout, train::plan_heterogeneous).
#include "tools/halo_train/plan_only.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "datasets/dataset_dir.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "partition/part_sizes.hpp"
#include "tools/common/folder_hints.hpp"
#include "tools/common/program.hpp"
#include "tools/halo_train/training_dataset.hpp"
#include "train/halo_traffic.hpp"
#include "train/memory_plan.hpp"
#include "train/models/model_config.hpp"
#include "train/rank_plan.hpp"
#include "train/trainer.hpp"

namespace halo::tools {
namespace {

using nlohmann::json;

// What every rank shares: the features, the logits' width, the labels per vertex, edge weights.
struct JobShape {
  std::string name;
  std::int64_t feature_dim = 0;
  std::int64_t classes = 0;
  std::int64_t label_columns = 1;
  bool weighted = false;
  std::string feature_dtype = "f32";  // as stored: streaming reads 2 bytes a value for f16 and bf16
  json partition;  // how the parts were (or would be) cut
};

std::int64_t scaled(std::int64_t count, double k) { return static_cast<std::int64_t>(std::llround(count * k)); }

// How the features are stored: f32, or the 16-bit format of the first type stored so.
std::string stored_dtype(const datasets::Dataset& ds) {
  for (const datasets::NodeType& t : ds.node_types)
    if (!t.half_features.empty()) return t.half_features.format == HalfFormat::float16 ? "f16" : "bf16";
  return "f32";
}

// What every rank of a homogeneous dataset's job shares, from the dataset.
void describe_job(const datasets::Dataset& ds, JobShape& job) {
  const bool multilabel = ds.meta.task == datasets::Task::multilabel;
  job.name = ds.meta.name;
  job.feature_dim = ds.target().feature_dim();
  job.feature_dtype = stored_dtype(ds);
  job.classes = multilabel ? ds.meta.num_tasks : ds.meta.num_classes;
  job.label_columns = multilabel ? ds.meta.num_tasks : 1;
  job.weighted = ds.graph.has_weights();
}

std::vector<partition::PartSizes> sizes_from_dataset(const TrainOptions& o, const datasets::Dataset& ds,
                                                     JobShape& job) {
  describe_job(ds, job);
  partition::PartitionOptions options;
  options.method = partition::method_from_string(o.plan_partitioner);
  options.num_parts = o.world_size;
  partition::PartitionQuality quality;
  std::vector<partition::PartSizes> sizes = partition::estimate_part_sizes(ds, options, &quality);
  job.partition = {{"source", "estimated in memory"},
                   {"method", o.plan_partitioner},
                   {"edge_cut", quality.edge_cut},
                   {"halo_total", quality.halo_total},
                   {"replication_factor", quality.replication_factor}};
  return sizes;
}

std::vector<partition::PartSizes> sizes_from_partitions(const TrainOptions& o, JobShape& job) {
  require_folder_kind(o.partitions, FolderKind::halo_partition, "--partitions");
  const partition::PartitionDirInfo info = partition::read_partition_info(o.partitions);
  if (info.meta.is_hetero)
    throw UnsupportedError("--plan-only plans homogeneous partitions so far; '" + info.meta.name +
                           "' is heterogeneous");
  const bool multilabel = info.meta.task == datasets::Task::multilabel;
  job.name = info.meta.name;
  job.feature_dim = info.node_types.at(0).feature_dim;
  const datasets::DatasetFileEntry* features =
      info.parts.at(0).find_file(partition::PartitionDirInfo::part_folder(0) + "/node_feat.npy");
  if (features != nullptr && features->dtype == datasets::DType::float16) job.feature_dtype = "f16";
  if (features != nullptr && features->dtype == datasets::DType::bfloat16) job.feature_dtype = "bf16";
  job.classes = multilabel ? info.meta.num_tasks : info.meta.num_classes;
  job.label_columns = multilabel ? info.meta.num_tasks : 1;
  job.weighted =
      info.parts.at(0).find_file(partition::PartitionDirInfo::part_folder(0) + "/graph/weights.npy") != nullptr;
  job.partition = {{"source", o.partitions},
                   {"method", partition::to_string(info.method)},
                   {"edge_cut", info.quality.edge_cut},
                   {"halo_total", info.quality.halo_total},
                   {"replication_factor", info.quality.replication_factor}};
  return partition::part_sizes(info);
}

json plan_json(const train::MemoryPlan& plan) {
  json items = json::object();
  for (const train::MemoryItem& item : plan.items) items[item.name] = item.bytes;
  items["total"] = plan.total_bytes();
  return items;
}

// A heterogeneous model on one process: the plan train() checks (train::plan_heterogeneous), from
// the model's layout on the whole graph.
int plan_heterogeneous_job(const TrainOptions& o, const datasets::Dataset& ds, std::int64_t memory) {
  if (o.world_size > 1)
    throw UnsupportedError(
        fmt::format("--plan-only plans a heterogeneous dataset ('{}') on one process; its ranks "
                    "train on the cpu and plan themselves when they start",
                    ds.meta.name));
  if (!train::is_heterogeneous_kind(o.model.kind))
    throw InvalidArgument(fmt::format("--plan-only: '{}' is heterogeneous; plan it with --model {}, not {}",
                                      ds.meta.name, train::heterogeneous_kinds, o.model.kind));
  train::TrainConfig config = o.train;
  if (config.memory_limit <= 0) config.memory_limit = memory;  // a GPU's table streaming is decided from it
  const train::MemoryPlan plan = train::plan_heterogeneous(ds, o.model, config);
  const bool fits = plan.total_bytes() <= memory;
  log_info(fmt::format("plan of '{}' on one process of {} ({}), model {} {} x {}: {} | {}", ds.meta.name,
                       train::format_bytes(memory), o.train.device.to_string(), o.model.kind, o.model.layers,
                       o.model.hidden, train::format_bytes(plan.total_bytes()), fits ? "fits" : "DOES NOT FIT"));
  log_info("plan:\n" + plan.table());
  if (!o.json.empty())
    write_json(o.json,
               json{{"plan_only", true},
                    {"dataset", ds.meta.name},
                    {"world_size", 1},
                    {"device", o.train.device.to_string()},
                    {"memory_bytes_per_rank", memory},
                    {"feature_dtype", stored_dtype(ds)},
                    {"model", {{"kind", o.model.kind}, {"layers", o.model.layers}, {"hidden", o.model.hidden}}},
                    {"fits", fits},
                    {"ranks", json::array({json{{"rank", 0}, {"memory_plan", plan_json(plan)}, {"fits", fits}}})}});
  return fits ? 0 : 1;
}

// One rank's part and its plan.
struct PlannedRank {
  train::PartShape shape;
  train::RankPlan plan;
};

// Every rank's plan from its part's counts (times --plan-scale), agreed as the trainers agree.
std::vector<PlannedRank> plan_ranks(const TrainOptions& o, const std::vector<partition::PartSizes>& sizes,
                                    const JobShape& job, std::int64_t memory) {
  const double k = o.plan_scale;
  const train::ModelShape model(o.model, job.feature_dim, job.classes, o.train.device);
  std::vector<PlannedRank> planned;
  for (const partition::PartSizes& p : sizes) {
    train::PartShape shape;
    shape.owned = scaled(p.owned, k);
    shape.halo = scaled(p.halo, k);
    shape.send_rows = scaled(p.send_rows, k);
    shape.entries = scaled(p.entries, k);
    shape.wide_ids = shape.owned + shape.halo > std::numeric_limits<std::int32_t>::max();
    shape.weighted = job.weighted;
    shape.train = scaled(p.train, k);
    shape.valid = scaled(p.valid, k);
    shape.test = scaled(p.test, k);
    shape.label_values = shape.owned * job.label_columns;
    shape.feature_dim = job.feature_dim;
    shape.classes = job.classes;
    planned.push_back({shape, train::plan_rank(shape, model, o.train, memory)});
  }
  // As the ranks' trainers agree: where one streams or recomputes, every one does.
  std::vector<train::PartShape> shapes;
  std::vector<train::RankPlan> plans;
  for (PlannedRank& p : planned) {
    shapes.push_back(p.shape);
    plans.push_back(std::move(p.plan));
  }
  plans = train::agree_rank_plans(shapes, model, o.train, memory, std::move(plans));
  for (std::size_t r = 0; r < planned.size(); ++r) planned[r].plan = std::move(plans[r]);
  return planned;
}

// A homogeneous dataset trained by one process: the plan train() makes (train::plan_homogeneous),
// beside the dataset's counts as one part without halo.
PlannedRank plan_one_process(const TrainOptions& o, const datasets::Dataset& ds, std::int64_t memory, JobShape& job) {
  if (o.plan_scale != 1.0)
    throw InvalidArgument("--plan-scale scales the parts of a job of several ranks; give --world-size P (2 or more)");
  describe_job(ds, job);
  job.partition = {{"source", "one process"}};
  PlannedRank one;
  one.shape.owned = ds.graph.num_rows();
  one.shape.entries = ds.graph.num_edges();
  one.shape.weighted = job.weighted;
  one.shape.train = static_cast<std::int64_t>(ds.split.train.size());
  one.shape.valid = static_cast<std::int64_t>(ds.split.valid.size());
  one.shape.test = static_cast<std::int64_t>(ds.split.test.size());
  one.shape.label_values = one.shape.owned * job.label_columns;
  one.shape.feature_dim = job.feature_dim;
  one.shape.classes = job.classes;
  one.plan = train::plan_homogeneous(ds, o.model, o.train, memory);
  return one;
}

}  // namespace

int plan_only(const TrainOptions& o) {
  const std::int64_t memory =
      o.device_memory.empty() ? train::machine_available_bytes() : train::parse_byte_size(o.device_memory);
  if (memory <= 0)
    throw InvalidArgument("--plan-only: this machine's available memory is unknown; give --device-memory BYTES");
  JobShape job;
  std::vector<PlannedRank> planned;
  if (o.partitions.empty()) {
    const datasets::Dataset ds = read_training_dataset(o);
    if (ds.meta.is_hetero) return plan_heterogeneous_job(o, ds, memory);
    if (o.world_size < 2) {
      planned.push_back(plan_one_process(o, ds, memory, job));
    } else {
      planned = plan_ranks(o, sizes_from_dataset(o, ds, job), job, memory);
    }
  } else {
    planned = plan_ranks(o, sizes_from_partitions(o, job), job, memory);
  }
  const double k = o.plan_scale;
  json ranks = json::array();
  bool all_fit = true;
  std::int64_t halo_bytes_total = 0;
  log_info(fmt::format("plan of '{}' on {} {} of {} each ({}{}), model {} {} x {}", job.name, planned.size(),
                       planned.size() == 1 ? "rank" : "ranks", train::format_bytes(memory), o.train.device.to_string(),
                       k != 1.0 ? fmt::format(", counts x {}", k) : "", o.model.kind, o.model.layers, o.model.hidden));
  for (std::size_t r = 0; r < planned.size(); ++r) {
    const train::PartShape& shape = planned[r].shape;
    const train::RankPlan& plan = planned[r].plan;
    const std::int64_t halo_bytes = train::halo_bytes_per_epoch(shape.halo, job.feature_dim, o.model, job.classes);
    halo_bytes_total += halo_bytes;
    all_fit = all_fit && plan.fits;
    const std::string features =
        plan.placement.streamed
            ? fmt::format("{} features streamed, {} budget", job.feature_dtype,
                          train::format_bytes(plan.placement.budget_bytes))
            : fmt::format("{} features resident", job.feature_dtype);
    const std::string recompute = plan.recompute == "aggregation" ? ", Â·x recomputed"
                                  : plan.recompute == "layer"     ? ", layers recomputed"
                                                                  : "";
    const std::string dtype = o.model.activation_dtype == "bf16" ? ", bf16 activations" : "";
    log_info(fmt::format("rank {}: {} rows, {} halo rows, {} entries | plan {} ({}{}) | halo {} per epoch | {}", r,
                         shape.owned, shape.halo, shape.entries, train::format_bytes(plan.plan.total_bytes()), features,
                         recompute + dtype, train::format_bytes(halo_bytes), plan.fits ? "fits" : "DOES NOT FIT"));
    log_debug("rank " + std::to_string(r) + " plan:\n" + plan.plan.table());
    ranks.push_back(json{{"rank", r},
                         {"owned_rows", shape.owned},
                         {"halo_rows", shape.halo},
                         {"send_rows", shape.send_rows},
                         {"entries", shape.entries},
                         {"train", shape.train},
                         {"memory_plan", plan_json(plan.plan)},
                         {"features", plan.placement.streamed ? "streamed" : "resident"},
                         {"feature_budget_bytes", plan.placement.streamed ? plan.placement.budget_bytes : 0},
                         {"recompute", plan.recompute},
                         {"halo_bytes_received_per_epoch", halo_bytes},
                         {"fits", plan.fits}});
  }
  log_info(all_fit ? std::string("every rank fits")
                   : std::string("some rank does not fit: more ranks, --feature-memory-budget, or a smaller model"));
  if (!o.json.empty())
    write_json(o.json, json{{"plan_only", true},
                            {"dataset", job.name},
                            {"world_size", planned.size()},
                            {"device", o.train.device.to_string()},
                            {"memory_bytes_per_rank", memory},
                            {"plan_scale", k},
                            {"feature_dtype", job.feature_dtype},
                            {"model", {{"kind", o.model.kind}, {"layers", o.model.layers}, {"hidden", o.model.hidden}}},
                            {"partition", job.partition},
                            {"halo_bytes_per_epoch", halo_bytes_total},
                            {"fits", all_fit},
                            {"ranks", ranks}});
  return all_fit ? 0 : 1;
}

}  // namespace halo::tools
