// How good a partition is: edge cut, halo (communication) volume, replication and balance, overall
// and per part. These are the numbers halo-partition reports and partition.json stores.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/base/array.hpp"
#include "partition/local_graph.hpp"
#include "partition/union_graph.hpp"

namespace halo::partition {

struct PartQuality {
  std::int64_t owned = 0;  // vertices the part owns
  std::int64_t halo = 0;   // distinct vertices of other parts its rows read
  std::int64_t edges = 0;  // stored entries of its rows (its local CSRs' entries, all relations)
  std::int64_t train = 0;  // training vertices it owns
};

// max / mean of a per-part quantity (1 = perfect balance; 0 when the quantity is zero everywhere).
struct Imbalance {
  double max = 0;
  double mean = 0;
  double ratio() const { return mean > 0 ? max / mean : 0.0; }
};

struct PartitionQuality {
  std::int32_t num_parts = 0;
  std::int64_t num_vertices = 0;
  std::int64_t num_edges = 0;       // stored entries, all relations
  std::int64_t edge_cut = 0;        // stored entries whose two ends lie in different parts
  double edge_cut_fraction = 0;     // edge_cut / num_edges (0 for an edgeless graph)
  std::int64_t halo_total = 0;      // sum of the parts' halos: vertex rows received per exchange
  double replication_factor = 1;    // (num_vertices + halo_total) / num_vertices
  Imbalance vertices;
  Imbalance edges;
  Imbalance train;
  std::vector<PartQuality> parts;
};

// The quality of `parts` on `g`, whose halos `plan` holds (plan_halos(g, parts, P)); `train` are
// the global ids of the training vertices. O(V + E) work, parallel, deterministic.
PartitionQuality evaluate_partition(const UnionGraph& g, const Array<std::int64_t>& train,
                                    const Array<std::int32_t>& parts, const HaloPlan& plan);

}  // namespace halo::partition
