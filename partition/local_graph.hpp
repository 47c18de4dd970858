// The per-rank view of a partitioned graph: each part's local CSR, numbered owned vertices first,
// then halo vertices grouped by owning rank, with the maps a halo exchange packs and unpacks by.
//
// Numbering of part p: local ids [0, num_owned) are p's vertices in ascending global id; local ids
// num_owned + [recv_offsets[q], recv_offsets[q + 1]) are the vertices owned by rank q that p's
// rows read (its halo from q), in ascending global id. A vertex's row in its owner's numbering is
// therefore its rank among that owner's vertices, and rank q's send list to p (the owned rows p
// needs, in p's halo order) is simply those rows in ascending order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/base/array.hpp"
#include "graph/csr.hpp"
#include "partition/union_graph.hpp"

namespace halo::partition {

// What every part's numbering needs, computed once for all parts.
struct HaloPlan {
  std::int32_t num_parts = 0;
  Array<std::int64_t> owned_offsets;   // P + 1: part p owns owned_vertices[offsets[p], offsets[p + 1])
  Array<std::int64_t> owned_vertices;  // all global ids grouped by part, ascending within a part
  Array<std::int64_t> row_of;          // per global id: its row in its owner's numbering
  std::vector<Array<std::int64_t>> halo;          // per part: halo global ids grouped by owner
  std::vector<Array<std::int64_t>> halo_offsets;  // per part: P + 1 offsets into halo[p] by owner

  std::int64_t num_owned(std::int32_t part) const;
  std::int64_t halo_total() const;
};

// Checks that every part id lies in [0, num_parts) (InvalidArgument naming the first vertex that
// does not), then groups the vertices by part and finds each part's halo: the distinct columns of
// its rows, over all relations, owned elsewhere. O(V P / 64 + E) work, parallel; O(V + total halo)
// memory; deterministic.
HaloPlan plan_halos(const UnionGraph& g, const Array<std::int32_t>& parts, std::int32_t num_parts);

struct LocalGraph {
  std::int32_t rank = 0;
  std::int32_t num_parts = 1;
  std::int64_t num_owned = 0;
  std::int64_t num_halo = 0;
  Array<std::int64_t> local_to_global;  // num_owned + num_halo global ids
  Array<std::int32_t> halo_owner;       // per halo vertex: its owning rank
  Array<std::int64_t> halo_remote_row;  // per halo vertex: its row in the owner's numbering
  Array<std::int64_t> recv_offsets;     // P + 1: halo vertices from rank q are [recv_offsets[q], recv_offsets[q + 1])
  Array<std::int64_t> send_offsets;     // P + 1: rows sent to rank q are send_rows[send_offsets[q], send_offsets[q + 1])
  Array<std::int64_t> send_rows;        // owned rows, in the order of each peer's halo list
  // One local CSR per relation (a homogeneous part has exactly one, with key ""): num_owned rows,
  // num_owned + num_halo columns, rows of vertices not of the relation's destination type empty.
  // Entries are the dataset's, with columns renumbered and sorted by local id (owned columns
  // first, then each owner's halo columns), weights carried.
  std::vector<std::string> relation_keys;
  std::vector<graph::CsrGraph> relations;
  Array<std::int32_t> vertex_type;      // heterogeneous: type index of each local vertex; else empty
  std::vector<std::int64_t> owned_type_offsets;  // types + 1: owned rows of type t are [offsets[t], offsets[t + 1])

  std::int64_t num_local() const { return num_owned + num_halo; }
  // The local CSR of a homogeneous part (throws InvalidArgument for a heterogeneous one).
  const graph::CsrGraph& graph() const;
};

// Builds part `rank`'s local graph. O(V + edges of the part) work plus a sort of each row,
// parallel; O(V) scratch memory (the local id of each global id); deterministic.
LocalGraph build_local_graph(const UnionGraph& g, const Array<std::int32_t>& parts, const HaloPlan& plan,
                             std::int32_t rank);

}  // namespace halo::partition
