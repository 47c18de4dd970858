// Dataset: a node-property-prediction dataset in memory, homogeneous or heterogeneous: the graph,
// the features and labels of each vertex type, and the split of the labelled (target) type.
// Produced by the OGB reader, the generators and the dataset-directory reader; consumed by
// halo-partition and the trainers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/half_features.hpp"
#include "graph/base/array.hpp"
#include "graph/csr.hpp"
#include "graph/hetero_graph.hpp"

namespace halo::datasets {

enum class Task {
  multiclass,  // one label per vertex in [0, num_classes); -1 = unlabelled (OGB "acc")
  multilabel,  // num_tasks 0/1 labels per vertex; -1 = unlabelled (OGB "rocauc", ogbn-proteins)
};
const char* to_string(Task task);
Task task_from_string(const std::string& name);  // "multiclass" / "multilabel"

struct DatasetMeta {
  std::string name;                // e.g. "ogbn-arxiv", "cora", "sbm"
  Task task = Task::multiclass;
  std::int64_t num_classes = 0;    // multiclass: number of classes; multilabel: 2
  std::int64_t num_tasks = 1;      // label columns
  std::string split_name;          // OGB split folder ("time", "planetoid", ...) or "random"
  bool is_hetero = false;
  std::string target_type;         // vertex type carrying labels and split; "node" if homogeneous
  bool directed = false;           // the stored graph is not symmetric
  std::string source;              // where it came from: an OGB folder, "synth sbm seed=1", ...
};

// One vertex type: its size, its features (count x feature_dim float32, or empty) and its labels
// (count values, or count x num_tasks for multilabel; or empty). Features stored in 16 bits
// (float16 or bfloat16) are in `half_features` instead, `features` empty, where the code that made
// the dataset asked for them so (DatasetDirOptions::keep_half_features, write_dataset_dir's
// feature dtype); everywhere else they arrive widened in `features`.
struct NodeType {
  std::string name;
  std::int64_t count = 0;
  Array<float> features;
  Array<std::int64_t> labels;
  HalfFeatures half_features;

  bool has_features() const { return !features.empty() || !half_features.empty(); }
  std::int64_t feature_dim() const { return !half_features.empty() ? half_features.cols() : features.cols(); }
};

// Vertex ids (of the target type) of the three splits.
struct Split {
  Array<std::int64_t> train;
  Array<std::int64_t> valid;
  Array<std::int64_t> test;
};

struct Dataset {
  DatasetMeta meta;
  std::vector<NodeType> node_types;  // homogeneous: exactly one, named "node"
  graph::CsrGraph graph;             // homogeneous graph (rows are destinations)
  Array<float> edge_features;        // homogeneous: one row per entry of `graph`, or empty
  graph::HeteroGraph hetero;         // heterogeneous graph (meta.is_hetero)
  Split split;

  // The vertex type with labels and split (the only type of a homogeneous dataset).
  const NodeType& target() const;
  NodeType& target();
  const NodeType& node_type(const std::string& name) const;
  std::int64_t num_vertices() const;   // all types together
  std::int64_t num_edges() const;      // directed CSR entries, all relations together
};

// Whether check_dataset reads every feature value (a pass over the whole matrix) or only its
// shape: a reader that rejected every non-finite value as it parsed skips the pass.
enum class FeatureValues { check, already_checked };

// Checks the whole dataset for consistency: sizes agree between graph, features, labels and
// types; labels in [-1, num_classes); split ids in range, unique within and across splits;
// features finite. Throws InvalidArgument naming the array and the first bad value.
void check_dataset(const Dataset& ds, FeatureValues features = FeatureValues::check);

}  // namespace halo::datasets
