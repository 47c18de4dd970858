// UnionGraph: a dataset's graph seen in one global vertex id space, so that homogeneous and
// heterogeneous datasets are partitioned the same way. Global id = type offset + id within the
// type (types in the order of the dataset's heterogeneous graph); every relation keeps its own
// CSR, addressed through the offsets of its destination (rows) and source (columns) types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "graph/base/array.hpp"
#include "graph/csr.hpp"

namespace halo::partition {

struct UnionGraph {
  struct Relation {
    const graph::CsrGraph* csr = nullptr;  // not owned: points into the dataset
    std::string key;                       // "src__rel__dst"; "" for a homogeneous graph
    std::int64_t row_offset = 0;           // global id of the destination type's vertex 0
    std::int64_t col_offset = 0;           // global id of the source type's vertex 0
  };

  std::int64_t num_vertices = 0;
  std::vector<std::string> type_names;    // homogeneous: {"node"}
  std::vector<std::int64_t> type_offsets; // type t owns global ids [offsets[t], offsets[t + 1])
  std::vector<Relation> relations;        // homogeneous: one, both offsets 0
  bool is_hetero = false;

  // Stored CSR entries over all relations.
  std::int64_t num_entries() const;
  // The type index of global vertex v; O(log types).
  int type_of(std::int64_t v) const;
  // Index of the type named `name`; throws InvalidArgument when absent.
  int type_index(const std::string& name) const;
};

// The union view of `ds` (no copy: relations point into ds, which must outlive the view). O(types
// + relations).
UnionGraph union_graph(const datasets::Dataset& ds);

// Global ids of the dataset's training vertices (split.train shifted by the target type's
// offset), in split order. O(train).
Array<std::int64_t> global_train_ids(const datasets::Dataset& ds, const UnionGraph& g);

// Stored entries of each vertex's rows over all relations (its in-degree), per global id. O(V)
// from the row offsets, parallel, deterministic.
Array<std::int64_t> union_in_degrees(const UnionGraph& g);

}  // namespace halo::partition
