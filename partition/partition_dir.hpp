// The partition directory (ARCHITECTURE.md): partition.json beside part-0000/ ... part-(P-1)/, one
// folder per rank, written atomically; rank r opens only its own folder. Each part folder holds
//   graph/{indptr,indices[,weights]}.npy       local CSR (homogeneous), or
//   relations/<src>__<rel>__<dst>/{...}.npy    one local CSR per relation (heterogeneous)
//   local_to_global.npy (int64)                global id of every local vertex
//   halo_owner.npy (int32), halo_remote_row.npy (int64)   per halo vertex: owner and its row there
//   recv_offsets.npy, send_offsets.npy (int64, P + 1), send_rows.npy (int64)
//   node_feat.npy, node_label.npy              owned rows (heterogeneous: nodes/<type>/...)
//   split/{train,valid,test}.npy (int64)       local rows of the owned split vertices
//   vertex_type.npy (int32, heterogeneous)     type index of every local vertex
// and partition.json lists every file with its dtype, shape, size and CRC-32, together with the
// source dataset (path and dataset.json's CRC-32), the method and its settings, and the quality.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/atomic_output.hpp"
#include "datasets/dataset.hpp"
#include "datasets/dataset_dir.hpp"
#include "partition/local_graph.hpp"
#include "partition/partitioner.hpp"
#include "partition/quality.hpp"

namespace halo::partition {

// The format_version this build writes and the only one it reads.
inline constexpr int partition_format_version = 1;

struct PartInfo {
  std::int32_t rank = 0;
  std::int64_t valid = 0;  // owned validation / test vertices (training ones: PartQuality::train)
  std::int64_t test = 0;
  std::vector<std::int64_t> owned_per_type;           // owned vertices of each vertex type
  std::vector<datasets::DatasetFileEntry> files;      // paths relative to the partition directory
  const datasets::DatasetFileEntry* find_file(const std::string& path) const;
  std::uint64_t total_bytes() const;
};

// The content of partition.json.
struct PartitionDirInfo {
  int format_version = partition_format_version;
  std::string source_path;      // the dataset directory partitioned
  std::string source_checksum;  // CRC-32 of its dataset.json (8 hex digits)
  datasets::DatasetMeta meta;
  std::vector<datasets::NodeTypeInfo> node_types;  // in global id order
  std::vector<std::int64_t> type_offsets;          // types + 1 global id offsets
  std::vector<datasets::RelationInfo> relations;   // heterogeneous only
  Method method = Method::metis;
  Objective objective = Objective::cut;
  std::int32_t num_parts = 1;
  std::uint64_t seed = 1;
  std::vector<BalanceKey> balance;  // the keys actually balanced
  double imbalance = 0.03;
  std::int64_t metis_objective = -1;  // METIS's objval; -1 for other methods
  PartitionQuality quality;           // quality.parts[r]: owned, halo, edges, train of part r
  std::vector<PartInfo> parts;

  // "part-0003"
  static std::string part_folder(std::int32_t rank);
  std::uint64_t total_bytes() const;
};

struct PartitionSource {
  std::string path;      // the dataset directory, as it should be recorded
  std::string checksum;  // CRC-32 of its dataset.json
};

// Seconds spent in each stage of PartitionDirWriter::write.
struct PartitionWriteTimes {
  double plan_seconds = 0;         // grouping vertices, finding halos, the quality metrics
  double local_graph_seconds = 0;  // building the parts' local graphs
  double write_seconds = 0;        // gathering features and writing files (fsync included)
};

// Writes a partition directory atomically: nothing appears at `dir` until every file is written
// and synced, and a failure leaves nothing behind (datasets::AtomicDirectory).
class PartitionDirWriter {
 public:
  // Refuses an existing `dir` unless `force` (IoError), before any other work, so a caller can
  // construct the writer first and fail fast.
  PartitionDirWriter(const std::string& dir, bool force);

  // Builds every part of `ds` under `parts` (result.parts) and writes it, then partition.json,
  // then commits. `options` records the method and settings; `balance` the keys actually
  // balanced. Parts are built and written one at a time, so memory beyond the dataset is one
  // part's local graph and rows plus O(V + total halo). Returns what partition.json holds.
  // Cost: plan_halos, evaluate_partition and build_local_graph for every part (parallel), plus
  // the files' I/O and one fsync per file. The files are deterministic for given parts.
  PartitionDirInfo write(const datasets::Dataset& ds, const PartitionSource& source, const PartitionOptions& options,
                         const std::vector<BalanceKey>& balance, const PartitionResult& result,
                         PartitionWriteTimes* times = nullptr);

 private:
  datasets::AtomicDirectory out_;
};

// Parses dir/partition.json (no array is opened). Throws IoError naming the file for malformed
// JSON, a missing or mistyped key, a foreign format or an unknown format_version.
PartitionDirInfo read_partition_info(const std::string& dir);

// One rank's share of a partitioned dataset.
struct Part {
  datasets::DatasetMeta meta;
  LocalGraph graph;
  // Owned rows only, per vertex type in global order: count = owned vertices of the type,
  // features / labels empty when the dataset has none for that type.
  std::vector<datasets::NodeType> node_types;
  datasets::Split split;  // local rows of the owned train / valid / test vertices
};

struct PartReadOptions {
  bool verify_checksums = true;  // recompute the CRC-32 of every file of the part (off: --no-verify)
  // Features stored in 16 bits stay so in NodeType::half_features, else they are widened (as
  // datasets::DatasetDirOptions::keep_half_features).
  bool keep_half_features = false;
};

// Opens part `rank` of the partition directory `dir`: reads partition.json, checks that every
// file of that part exists with its listed size (and, with verify_checksums, its CRC-32) and maps
// the arrays read-only; no other part's file is touched. Then, always, checks the values that
// index anything: the local CSRs in bounds, global ids, halo owners and rows, send and receive
// offsets, rows sent, vertex types and split rows inside their ranges, labels in range, features
// finite. Throws InvalidArgument for a rank out of range and IoError naming the offending file,
// position and value. O(part bytes), parallel.
Part read_part(const std::string& dir, std::int32_t rank, const PartReadOptions& options = {});

}  // namespace halo::partition
