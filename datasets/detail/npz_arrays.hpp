// The arrays of OGB's binary layout read from .npz archives under OGB's dtype rules (what
// DatasetSaver writes, and what numpy would also accept): counts, edge lists as CSR, features as
// float32 and labels as int64, each checked as it streams in. For ogb_binary_reader.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "datasets/detail/csv_numbers.hpp"
#include "datasets/npz.hpp"
#include "graph/build.hpp"
#include "graph/csr.hpp"

namespace halo::datasets::detail {

// The count of a one-graph dataset in `key` (num_nodes_list, num_edges_list, or an entry of the
// heterogeneous count dicts): an integer array of one non-negative value. IoError naming the
// member for another dtype or shape or a negative count; UnsupportedError for several values
// (several graphs, as ogbg datasets have).
std::int64_t read_npz_count(const NpzReader& npz, const std::string& key);

// The edge list `key` (shape (2, E), integer; row 0 the sources, row 1 the destinations) as a
// dst.limit x src.limit CSR with rows = destinations, built with `coo` (index type from the
// limits). E must equal rows.rows. The ids are range-checked and narrowed to int32 (when the
// limits allow) as they stream in, so memory stays at 2E ids of the narrow type plus the CSR.
// IoError naming the member and the edge for an id out of range.
graph::CsrGraph read_npz_edge_csr(const NpzReader& npz, const std::string& key, const ExpectedRows& rows,
                                  const IdColumn& src, const IdColumn& dst, graph::CooToCsrOptions coo);

// The ids of the edge list `key` (checked as for read_npz_edge_csr): 2E values of type I, the
// sources then the destinations, narrowed as they stream in (every limit must fit I).
template <class I>
Array<I> read_npz_edge_ids(const NpzReader& npz, const std::string& key, const ExpectedRows& rows, const IdColumn& src,
                           const IdColumn& dst);

// The features `key` of `rows.rows` vertices as float32 (rows x F; a 1-D array is one column):
// float32 read in place, float64 and integers converted as they stream in. IoError naming the
// member, the row and the column for a value that is not finite (as float32).
Array<float> read_npz_features(const NpzReader& npz, const std::string& key, const ExpectedRows& rows);

// The labels `key` of `rows.rows` vertices as an int64 rows x columns matrix: integer arrays
// as they are, float arrays (OGB keeps labels as given; papers100M's are floats) with NaN = -1
// (unlabelled). Values must be integers >= -1 and below spec.limit; the column count must be
// spec.columns when that is known. IoError naming the member, row and column otherwise.
Array<std::int64_t> read_npz_labels(const NpzReader& npz, const std::string& key, const ExpectedRows& rows,
                                    const LabelSpec& spec);

}  // namespace halo::datasets::detail
