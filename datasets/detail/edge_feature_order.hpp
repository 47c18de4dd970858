// Edge features in CSR order: OGB lists them beside its edge list (one row per stored edge, in file
// order); halo's dataset directory keeps them beside the CSR (graph/edge_feat.npy, one row per CSR
// entry), so that entry k of graph/indices.npy has row k of the features. The CSR builder sorts
// the edges stably by (destination, source), reversed copies after all stored edges; this finds
// each entry's stored edge by the same ordering, independently, and checks it against the CSR.
#pragma once

#include <cstdint>

#include "graph/base/array.hpp"
#include "graph/csr.hpp"

namespace halo::datasets::detail {

// The rows of `stored_features` (num_stored x D, row e for the stored edge sources[e] ->
// destinations[e]) arranged as `g`'s entries: g's rows are destinations, built by csr_from_coo
// from these edges, and with `symmetrized` from them and their reverses (OGB's add_inverse_edge:
// a reversed copy has its edge's features), without merging duplicates. Throws InvalidArgument
// when g's entries are not exactly those edges in that order. O(E + sum of deg log deg),
// parallel over rows; 16 bytes of scratch per entry.
template <class I>
Array<float> edge_features_in_csr_order(const graph::CsrGraph& g, const I* sources, const I* destinations,
                                        std::int64_t num_stored, bool symmetrized, const Array<float>& stored_features);

}  // namespace halo::datasets::detail
