// METIS's graph file format (the input of the gpmetis program), so that a graph halo partitions
// can be handed to gpmetis as exactly the same graph, for comparison.
#pragma once

#include <string>

#include "graph/csr.hpp"

namespace halo::partition {

// Writes `g` (symmetric, without self loops or repeated entries: a PartitionInput graph) as a METIS
// graph file: a header "n m" (m = undirected edges = entries / 2), then one line per vertex
// listing its neighbours, 1-based, in the graph's order. Written atomically. Throws
// InvalidArgument for a graph that does not claim symmetry, IoError on write failure. O(E)
// formatting, parallel per block of rows; deterministic.
void write_metis_graph(const graph::CsrGraph& g, const std::string& path);

}  // namespace halo::partition
