// Builders: COO edge lists to CSR (parallel counting sort), and the structural transforms the
// trainers need: transpose, self loops, degrees, and GCN / mean normalisation as edge weights.
// All run on the host with OpenMP; results do not depend on the thread count.
#pragma once

#include <cstdint>

#include "graph/csr.hpp"

namespace halo::graph {

// What csr_from_coo does besides sorting, applied in this order: symmetrise, drop self loops,
// merge duplicates, add self loops. Asking for drop_self_loops and add_self_loops together gives
// every vertex exactly one self loop of weight 1 (PyG's add_self_loops).
struct CooToCsrOptions {
  // Also insert (col, row) for every (row, col), weight carried, as OGB's add_inverse_edge does:
  // the input edges first, then all of them reversed (so A + A^T; a self loop appears twice).
  // Needs num_rows == num_cols. The result claims symmetric: with drop_duplicates it is a
  // symmetric simple graph; without, a symmetric multigraph (row i holds column j as many times,
  // with the same weights, as row j holds column i), which is what validate() checks.
  bool symmetrize = false;
  bool drop_self_loops = false;  // remove (v, v)
  // Keep one copy of a repeated (row, col). Its weight is the sum of the copies' weights (added in
  // ascending order, in double, so that mirrored copies in a symmetric graph sum to the same
  // float); an unweighted graph stays unweighted.
  bool drop_duplicates = false;
  // Give every row r < min(rows, cols) that lacks (r, r) one, with weight 1; existing loops stay.
  bool add_self_loops = false;
  IndexType index_type = IndexType::i32;  // raised to i64 automatically when num_cols needs it
};

// Builds a CSR with `num_rows` rows from `num_edges` pairs (rows[e], cols[e]), optional
// weights[e] (nullptr = unweighted). Columns come out sorted within each row (the sort is stable,
// so duplicates keep input order); the result claims sorted, and symmetric when symmetrising.
// Throws InvalidArgument naming the first edge whose row or column is negative or out of range,
// with the value and the bound. O(E + V) work: a parallel counting sort (two levels: blocks of
// rows, then rows), then a sort of each row's columns; extra memory about E row ids of type I
// plus, when merging duplicates or adding loops, a second copy of the result. Deterministic: the
// result does not depend on the thread count. At ogbn-products scale (2.4 M vertices, 124 M
// int32 edges) it takes about 2.3 s on two cores for edges in random order, 1.4 s for edges
// already in order, and about 1 GB beyond the input. Instantiated for I = int32_t and int64_t.
template <class I>
CsrGraph csr_from_coo(std::int64_t num_rows, std::int64_t num_cols, const I* rows, const I* cols,
                      const float* weights, std::int64_t num_edges, const CooToCsrOptions& options = {});

// The transpose (num_cols x num_rows), weights carried along; rows of the result are sorted, and
// copies of an edge keep g's row order. Keeps g's index type (raised to i64 when g's num_rows
// needs it) and its symmetric claim. O(E + V) and about 2E extra ids of memory; deterministic.
CsrGraph transpose(const CsrGraph& g);

// The rows rows[0], rows[1], ... of g, in that order, as a CSR of `count` rows and g's columns
// (a row may be listed more than once), with their entries, weights and index type. Claims
// sorted when g does, never symmetric. InvalidArgument naming the first row outside
// [0, num_rows). O(count + entries taken), parallel over rows; deterministic.
CsrGraph select_rows(const CsrGraph& g, const std::int64_t* rows, std::int64_t count);

// Number of entries in each row (in-degree under the rows-are-destinations orientation). O(V).
Array<std::int64_t> row_degrees(const CsrGraph& g);
// Number of entries in each column (out-degree under that orientation). O(E + T * num_cols),
// per-thread histograms; deterministic. O(V) for a graph that claims symmetric (its row degrees).
Array<std::int64_t> column_degrees(const CsrGraph& g);

// The square graph with exactly one self loop per vertex added where missing (existing loops
// kept, with their weights); weights of added loops are 1. A sorted graph gets the loop in its
// sorted place, an unsorted one at the end of the row. Keeps g's claims. O(E + V).
CsrGraph with_self_loops(const CsrGraph& g);

// Kipf & Welling's Â = D^-1/2 (A + I) D^-1/2 as edge weights, D the row degrees of A + I
// (the graph must be square; self loops are added where missing, existing ones keep their weight,
// as PyG's gcn_norm does; existing weights are used as the entries of A). A row whose degree is 0
// gets weights 0. Weight (i, j) = a_ij * (d_i^-1/2 * d_j^-1/2), computed in double, so a symmetric
// graph gives bit-identical mirrored weights and keeps its symmetric claim. O(E + V).
CsrGraph gcn_normalize(const CsrGraph& g);

// Mean aggregation weights: each entry of row i gets weight 1 / deg(i) (rows with no entries
// stay empty). Existing weights are replaced. The result does not claim symmetric (1/deg(i) on
// (i, j) and 1/deg(j) on (j, i) differ). O(E + V).
CsrGraph mean_normalize(const CsrGraph& g);

}  // namespace halo::graph
