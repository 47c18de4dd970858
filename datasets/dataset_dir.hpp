// halo's dataset directory: dataset.json (metadata, counts, and every array file with its dtype,
// shape, size and CRC-32) beside .npy arrays, written atomically and opened by mapping the
// arrays. Layout (ARCHITECTURE.md, "The dataset directory"):
//   homogeneous:   graph/{indptr,indices[,weights,edge_feat]}.npy, node_feat.npy, node_label.npy
//   heterogeneous: relations/<src>__<rel>__<dst>/{indptr,indices[,weights]}.npy,
//                  nodes/<type>/{node_feat,node_label}.npy
//   both:          split/{train,valid,test}.npy (vertex ids of the target type)
// Feature, label and weight files are absent when the dataset has none. graph/edge_feat.npy (float32,
// one row per CSR entry, in the order of graph/indices.npy) only where edge features were kept. node_feat.npy is float32,
// or 16 bits: float16 (numpy's <f2) or bfloat16 (raw bits, <u2; dataset.json's dtype "bfloat16"
// is what says so). CSRs keep halo's
// orientation: rows are destinations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "datasets/npy.hpp"
#include "graph/csr.hpp"
#include "graph/hetero_graph.hpp"

namespace halo::datasets {

// The format_version this build writes and the only one it reads.
inline constexpr int dataset_format_version = 1;

// One array file as dataset.json lists it.
struct DatasetFileEntry {
  std::string path;  // relative to the directory, '/'-separated: "graph/indptr.npy"
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  std::uint64_t bytes = 0;  // size of the whole .npy file
  std::string crc32;        // 8 lowercase hex digits (file_checksum)
};

struct NodeTypeInfo {
  std::string name;
  std::int64_t count = 0;
  std::int64_t feature_dim = 0;  // 0 when the type has no features
};

struct RelationInfo {
  graph::RelationType type;
  std::int64_t num_edges = 0;
  graph::CsrProperties properties;
};

struct SplitSizes {
  std::int64_t train = 0;
  std::int64_t valid = 0;
  std::int64_t test = 0;
};

// The content of dataset.json.
struct DatasetDirInfo {
  int format_version = dataset_format_version;
  DatasetMeta meta;
  std::int64_t num_nodes = 0;  // all types together
  std::int64_t num_edges = 0;  // directed CSR entries, all relations together
  std::vector<NodeTypeInfo> node_types;
  std::vector<RelationInfo> relations;    // heterogeneous only
  graph::CsrProperties graph_properties;  // homogeneous only
  SplitSizes splits;
  std::vector<DatasetFileEntry> files;    // sorted by path

  // The entry for a relative path, or nullptr.
  const DatasetFileEntry* find_file(const std::string& path) const;
  // Sum of the listed files' sizes (dataset.json itself excluded).
  std::uint64_t total_bytes() const;
};

struct DatasetDirOptions {
  // Recompute every file's CRC-32 and compare it with dataset.json's (reads every byte once, at
  // several GB/s). Off only on request (--no-verify): the structural checks run either way.
  bool verify_checksums = true;
  // Features stored in 16 bits stay so, mapped, in NodeType::half_features (the trainer and the
  // partitioner read them so); otherwise they are widened into a float32 heap copy in
  // NodeType::features, which every other reader expects.
  bool keep_half_features = false;
};

// Writes `ds` as a dataset directory at `dir`, atomically (AtomicDirectory): either the whole
// directory appears or nothing does. Refuses an existing `dir` unless `force` (IoError, before
// any work). Runs check_dataset first (InvalidArgument on failure; `features` as there: a caller
// whose reader refused every non-finite value spares the pass over the features) and refuses
// vertex type or relation names unusable as folder names. Float32 features are stored as
// `feature_dtype` (narrow_features: InvalidArgument for a value beyond float16's range); features
// already in 16 bits (NodeType::half_features) are stored as they are. O(bytes) I/O plus one
// fsync per file.
void write_dataset_dir(const Dataset& ds, const std::string& dir, bool force,
                       FeatureValues features = FeatureValues::check,
                       FeatureDType feature_dtype = FeatureDType::float32);

// Opens a dataset directory. Checks that dataset.json is a halo dataset of a known format_version,
// that every listed file exists with its listed size and (with verify_checksums) its CRC-32, and
// each .npy header against dataset.json and the counts. Then, always, what stands between the
// values and an out-of-bounds access or a silently wrong run: every CSR's offsets and columns in
// bounds and weights finite, features finite, labels in [-1, num_classes), split ids inside the
// labelled type (datasets/array_checks.hpp). Arrays are mapped read-only, not copied. Throws
// IoError naming the offending file, position and value. O(bytes), parallel.
Dataset read_dataset_dir(const std::string& dir, const DatasetDirOptions& options = {});

// The 16-bit features in `path` as `entry` lists them (an entry of `listing`: "dataset.json" or
// "partition.json"): the format from its dtype (float16 or bfloat16), rows x cols (-1 = any) and
// its shape required. Throws IoError naming the file as read_npy_halves does, or for a shape the
// listing does not give.
HalfFeatures read_listed_halves(const std::string& path, const DatasetFileEntry& entry, std::int64_t rows,
                                std::int64_t cols, const std::string& listing);

// Parses dir/dataset.json only (no array is opened). Throws IoError naming dataset.json for
// malformed JSON, a missing or mistyped key, a foreign format or an unknown format_version.
DatasetDirInfo read_dataset_dir_info(const std::string& dir);

}  // namespace halo::datasets
