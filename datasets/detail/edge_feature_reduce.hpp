// Vertex features made from edge features, as OGB's ogbn-proteins baselines make them (it has
// edge features only): PyG's example takes adj_t.mean(dim=1) of the edge features (the mean over
// each vertex's incoming edges), DGL's sums them. Computed once, when a dataset is read.
#pragma once

#include <cstdint>

#include "datasets/ogb_reader.hpp"
#include "graph/base/array.hpp"

namespace halo::datasets::detail {

// The num_vertices x D features whose row v reduces (mean or sum; `reduce` must not be none) the
// edge features of the stored edges into v: edge e (sources[e] -> destinations[e], ids in range)
// adds row e of `edge_features` (num_edges x D) to its destination, and with `inverse` (OGB's
// add_inverse_edge, which gives every stored edge a reverse carrying the same features) to its
// source as well. A vertex no edge reaches gets zeros. Sums in double, edge by edge in file order,
// so the result does not depend on the thread count. O(E * D) work, O(V * D) extra memory.
template <class I>
Array<float> reduce_edge_features(std::int64_t num_vertices, const I* sources, const I* destinations,
                                  const Array<float>& edge_features, bool inverse, EdgeFeatureReduce reduce);

}  // namespace halo::datasets::detail
