// RgcnPart: one rank's part of a heterogeneous partition seen the way an R-GCN reads it, type by
// type. Each vertex type gets its own row numbering: its owned vertices (the outputs, in the
// part's order) and then its halo vertices (in the part's halo order: by owning rank, ascending
// global id); each relation becomes a CSR from the destination's owned rows to the source's rows,
// every row's entries in ascending global id (the order one process sums them in); and each type
// gets the halo maps of its rows alone, so a HaloExchange per type swaps them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/base/array.hpp"
#include "graph/csr.hpp"
#include "graph/hetero_graph.hpp"
#include "partition/local_graph.hpp"
#include "partition/partition_dir.hpp"
#include "train/layers/rgcn_conv.hpp"

namespace halo::train::dist {

struct RgcnPart {
  std::vector<std::string> type_names;       // the dataset's order
  std::vector<std::int64_t> type_offsets;    // types + 1: the whole graph's global id offsets
  std::vector<std::int64_t> num_outputs;     // per type: owned vertices
  std::vector<std::int64_t> num_inputs;      // per type: owned and halo vertices
  std::vector<Array<std::int64_t>> global_ids;  // per type: the global id of each input row
  // Per type: where its owned rows sit among the part's owned rows (the part's numbering).
  std::vector<std::int64_t> owned_offsets;
  std::vector<graph::RelationType> relation_types;  // the dataset's relation order
  std::vector<int> relation_src;
  std::vector<int> relation_dst;
  std::vector<graph::CsrGraph> relations;  // num_outputs[dst] x num_inputs[src], unweighted
  // Per type: its rows' halo maps for a HaloExchange (rank, parts, owned and halo counts, global
  // ids, halo owners, receive offsets, send offsets and rows in the type's numbering; no
  // relations, no remote rows).
  std::vector<partition::LocalGraph> exchange_graphs;

  // The RgcnGraph over `relations` (which must outlive it).
  RgcnGraph graph(graph::IndexType index_type = graph::IndexType::i32) const;
};

// Builds the R-GCN view of a heterogeneous part described by `info`. O(local vertices + part
// entries · log(degree)), parallel over rows; deterministic. InvalidArgument when the part is
// not heterogeneous or its relations are not the partition's.
RgcnPart rgcn_part(const partition::Part& part, const partition::PartitionDirInfo& info);

}  // namespace halo::train::dist
