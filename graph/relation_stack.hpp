// Relation stacks: all relations of a HeteroGraph that end at one vertex type, side by side in
// one CSR with R-GCN's mean weights, so one SpMM aggregates every relation of that type at once.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/csr.hpp"
#include "graph/hetero_graph.hpp"

namespace halo::graph {

struct RelationStackOptions {
  IndexType index_type = IndexType::i32;  // raised to i64 automatically when the width needs it
};

// The relations r_0, r_1, ... of a graph whose destination is `dst_type`, in the graph's order.
// Block k of the columns, [block_offsets[k], block_offsets[k + 1]), stands for the source
// vertices of relations[k]: source j of relations[k] is column block_offsets[k] + j. So csr · H,
// with H the row blocks [H_0; H_1; ...] (H_k one row per source vertex of relations[k]), gives
// every destination row i the sum Σ_k Σ_{j ∈ N_k(i)} H_k[j] / c_{i,k}.
struct RelationStack {
  int dst_type = -1;
  std::vector<int> relations;
  std::vector<std::int64_t> block_offsets{0};  // relations.size() + 1 offsets
  // count(dst_type) x block_offsets.back(). Row i holds the entries of row i of every relation,
  // block after block, each relation's in its own CSR order; an entry of relation k weighs
  // 1 / c_{i,k}, c_{i,k} the number of entries of row i in relation k (repeated edges count as
  // often as they appear; the relations' own weights are not used). Claims sorted when every
  // relation does. A type that no relation ends at gets an n x 0 CSR without entries.
  CsrGraph csr;

  int num_blocks() const { return static_cast<int>(relations.size()); }
  std::int64_t width() const { return block_offsets.back(); }
};

// Builds the relation stack of `dst_type` (an index of g's vertex types; InvalidArgument
// otherwise). O(R + E_t + R_t · V_t) for the R_t relations into the type, their E_t entries and
// the type's V_t vertices; parallel over rows, deterministic (the result does not depend on the
// thread count).
RelationStack stack_relations(const HeteroGraph& g, int dst_type, const RelationStackOptions& options = {});

// The same from explicit relations, for graphs a HeteroGraph cannot hold (a part of a
// distributed graph, whose relations have the part's owned vertices as rows and its owned and
// halo vertices as columns): blocks[k] (num_rows x its own column count, non-null) is the k-th
// block and stands for relation ids[k]; the stack's dst_type is `dst_type`. InvalidArgument when
// the sizes disagree.
RelationStack stack_relations(int dst_type, std::int64_t num_rows, const std::vector<int>& ids,
                              const std::vector<const CsrGraph*>& blocks, const RelationStackOptions& options = {});

// Block k of a stack as a CSR of its own: count(dst_type) x (block_offsets[k + 1] -
// block_offsets[k]), the entries of relations[k] with their stack weights and columns shifted
// back to the relation's source ids, so that spmm with it gives Σ_{j ∈ N_k(i)} x[j] / c_{i,k}
// for one relation. Same index type as the stack. O(V_t log(degree) + E_k), parallel over rows,
// deterministic. InvalidArgument for k outside [0, num_blocks()).
CsrGraph stack_block(const RelationStack& s, int k);

}  // namespace halo::graph
