// Internal to graph/: the two halves of csr_from_coo, also used by the transforms: the stable
// counting sort by row, and the row-by-row rewrite (merge repeated columns, add missing self
// loops). Both are defined in graph/coo_to_csr.cpp.
#pragma once

#include <cstdint>

#include "graph/csr.hpp"

namespace halo::graph::detail {

// csr_from_coo's sort with the input checks, symmetrising and self-loop dropping, and no row
// rewrite; the result claims `symmetric` as the caller says. Instantiated for int32 and int64.
template <class I>
CsrGraph sort_coo_by_row(std::int64_t num_rows, std::int64_t num_cols, const I* rows, const I* cols,
                         const float* weights, std::int64_t num_edges, bool symmetrize, bool drop_self_loops,
                         IndexType index_type, bool symmetric);

struct RowRebuild {
  bool drop_duplicates = false;  // needs sorted rows; weights of a run of copies are summed
  bool add_self_loops = false;   // rows r < min(rows, cols) without (r, r) get it, weight 1
};

// A new graph with g's rows rewritten as asked; the properties are g's (both rewrites keep rows
// sorted and a symmetric graph symmetric). Unweighted in, unweighted out. O(E + V), parallel
// over rows, deterministic.
CsrGraph rebuild_rows(const CsrGraph& g, const RowRebuild& what);

}  // namespace halo::graph::detail
