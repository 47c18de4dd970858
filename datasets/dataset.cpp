// Dataset accessors and the whole-dataset consistency check.
#include "datasets/dataset.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::datasets {

const char* to_string(Task task) { return task == Task::multiclass ? "multiclass" : "multilabel"; }

Task task_from_string(const std::string& name) {
  if (name == "multiclass") return Task::multiclass;
  if (name == "multilabel") return Task::multilabel;
  throw InvalidArgument("task_from_string: unknown task '" + name + "' (expected multiclass or multilabel)");
}

const NodeType& Dataset::node_type(const std::string& name) const {
  for (const NodeType& t : node_types)
    if (t.name == name) return t;
  throw InvalidArgument("Dataset::node_type: dataset '" + meta.name + "' has no vertex type '" + name + "'");
}

const NodeType& Dataset::target() const { return node_type(meta.target_type); }
NodeType& Dataset::target() { return const_cast<NodeType&>(static_cast<const Dataset&>(*this).target()); }

std::int64_t Dataset::num_vertices() const {
  std::int64_t n = 0;
  for (const NodeType& t : node_types) n += t.count;
  return n;
}

std::int64_t Dataset::num_edges() const {
  return meta.is_hetero ? hetero.total_edges() : graph.num_edges();
}

namespace {

void check_features(const std::string& dataset, const NodeType& t, FeatureValues values) {
  if (!t.half_features.empty()) {
    HALO_EXPECTS(t.features.empty(), "dataset '" + dataset + "': vertex type '" + t.name +
                                         "' has features in float32 and in 16 bits; keep one");
    const HalfFeatures& h = t.half_features;
    HALO_EXPECTS(h.bits.ndim() == 2 && h.rows() == t.count,
                 "dataset '" + dataset + "': features of '" + t.name + "' have " + std::to_string(h.rows()) +
                     " rows, expected " + std::to_string(t.count));
    if (values == FeatureValues::already_checked) return;
    const std::int64_t i = parallel_find_first(
        0, h.bits.size(), [&](std::int64_t k) { return !half_is_finite(h.format, h.bits.data()[k]); });
    if (i < h.bits.size())
      throw InvalidArgument("dataset '" + dataset + "': feature of '" + t.name + "' vertex " +
                            std::to_string(i / h.cols()) + " column " + std::to_string(i % h.cols()) + " is not finite");
    return;
  }
  if (t.features.empty()) return;
  HALO_EXPECTS(t.features.ndim() == 2 && t.features.rows() == t.count,
               "dataset '" + dataset + "': features of '" + t.name + "' have " +
                   std::to_string(t.features.rows()) + " rows, expected " + std::to_string(t.count));
  if (values == FeatureValues::already_checked) return;
  const float* x = t.features.data();
  const std::int64_t cols = t.features.cols();
  const std::int64_t i = parallel_find_first(0, t.features.size(), [&](std::int64_t k) { return !std::isfinite(x[k]); });
  if (i < t.features.size())
    throw InvalidArgument("dataset '" + dataset + "': feature of '" + t.name + "' vertex " + std::to_string(i / cols) +
                          " column " + std::to_string(i % cols) + " is not finite (" + std::to_string(x[i]) + ")");
}

void check_labels(const Dataset& ds, const NodeType& t) {
  if (t.labels.empty()) return;
  const std::int64_t cols = ds.meta.task == Task::multilabel ? ds.meta.num_tasks : 1;
  HALO_EXPECTS(t.labels.rows() == t.count && t.labels.cols() == cols,
               "dataset '" + ds.meta.name + "': labels of '" + t.name + "' are " + std::to_string(t.labels.rows()) +
                   " x " + std::to_string(t.labels.cols()) + ", expected " + std::to_string(t.count) + " x " +
                   std::to_string(cols));
  const std::int64_t limit = ds.meta.task == Task::multilabel ? 2 : ds.meta.num_classes;
  for (std::int64_t i = 0; i < t.labels.size(); ++i) {
    const std::int64_t y = t.labels[i];
    if (y < -1 || y >= limit)
      throw InvalidArgument("dataset '" + ds.meta.name + "': label of '" + t.name + "' vertex " +
                            std::to_string(i / cols) + " is " + std::to_string(y) + ", expected -1 (none) or 0.." +
                            std::to_string(limit - 1));
  }
}

void check_split(const Dataset& ds) {
  const NodeType& t = ds.target();
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(t.count), 0);
  const std::pair<const char*, const Array<std::int64_t>*> parts[] = {
      {"train", &ds.split.train}, {"valid", &ds.split.valid}, {"test", &ds.split.test}};
  for (const auto& [name, ids] : parts) {
    for (std::int64_t k = 0; k < ids->size(); ++k) {
      const std::int64_t v = (*ids)[k];
      if (v < 0 || v >= t.count)
        throw InvalidArgument("dataset '" + ds.meta.name + "': " + name + " split entry " + std::to_string(k) +
                              " is vertex " + std::to_string(v) + ", outside 0.." + std::to_string(t.count - 1));
      if (seen[static_cast<std::size_t>(v)])
        throw InvalidArgument("dataset '" + ds.meta.name + "': vertex " + std::to_string(v) + " is listed twice (again in " +
                              name + " split, entry " + std::to_string(k) + ")");
      seen[static_cast<std::size_t>(v)] = 1;
    }
  }
}

}  // namespace

void check_dataset(const Dataset& ds, FeatureValues features) {
  HALO_EXPECTS(!ds.node_types.empty(), "dataset '" + ds.meta.name + "' has no vertex types");
  if (ds.meta.is_hetero) {
    HALO_EXPECTS(ds.hetero.num_vertex_types() == static_cast<int>(ds.node_types.size()),
                 "dataset '" + ds.meta.name + "': graph has " + std::to_string(ds.hetero.num_vertex_types()) +
                     " vertex types, data has " + std::to_string(ds.node_types.size()));
    for (const NodeType& t : ds.node_types)
      HALO_EXPECTS(ds.hetero.vertex_count(ds.hetero.vertex_type(t.name)) == t.count,
                   "dataset '" + ds.meta.name + "': vertex type '" + t.name + "' counts disagree between graph and data");
  } else {
    HALO_EXPECTS(ds.node_types.size() == 1, "homogeneous dataset '" + ds.meta.name + "' must have one vertex type");
    const NodeType& t = ds.node_types[0];
    HALO_EXPECTS(ds.graph.num_rows() == t.count && ds.graph.num_cols() == t.count,
                 "dataset '" + ds.meta.name + "': graph is " + std::to_string(ds.graph.num_rows()) + " x " +
                     std::to_string(ds.graph.num_cols()) + ", expected " + std::to_string(t.count) + " vertices");
  }
  for (const NodeType& t : ds.node_types) {
    check_features(ds.meta.name, t, features);
    check_labels(ds, t);
  }
  if (!ds.edge_features.empty()) {
    HALO_EXPECTS(!ds.meta.is_hetero, "dataset '" + ds.meta.name + "': edge features are kept for homogeneous graphs only");
    HALO_EXPECTS(ds.edge_features.ndim() == 2 && ds.edge_features.rows() == ds.graph.num_edges(),
                 "dataset '" + ds.meta.name + "': " + std::to_string(ds.edge_features.rows()) +
                     " rows of edge features for " + std::to_string(ds.graph.num_edges()) + " CSR entries");
    const float* e = ds.edge_features.data();
    const std::int64_t i =
        parallel_find_first(0, ds.edge_features.size(), [&](std::int64_t k) { return !std::isfinite(e[k]); });
    if (i < ds.edge_features.size())
      throw InvalidArgument("dataset '" + ds.meta.name + "': edge feature of CSR entry " +
                            std::to_string(i / ds.edge_features.cols()) + " column " +
                            std::to_string(i % ds.edge_features.cols()) + " is not finite");
  }
  check_split(ds);
}

}  // namespace halo::datasets
