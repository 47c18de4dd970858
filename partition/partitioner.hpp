// The partitioners: assign every vertex of a dataset (all vertex types at once, in the global id
// space of union_graph.hpp) to one of P parts. METIS k-way (multi-constraint, through libmetis),
// a one-pass streaming partitioner (Fennel) for graphs past METIS's 32-bit limit, and a balanced
// random assignment. All run on the host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "graph/base/array.hpp"
#include "graph/csr.hpp"

namespace halo::partition {

enum class Method { metis, random, stream };
enum class Objective { cut, vol };  // METIS: minimise the edge cut or the communication volume
enum class BalanceKey { vertices, edges, train };

const char* to_string(Method method);
const char* to_string(Objective objective);
const char* to_string(BalanceKey key);
// Parsers of the command-line names; each throws InvalidArgument naming the unknown value and
// the accepted ones.
Method method_from_string(const std::string& name);
Objective objective_from_string(const std::string& name);
BalanceKey balance_key_from_string(const std::string& name);
// "vertices,edges,train" -> the keys in order; empty, repeated or unknown keys throw.
std::vector<BalanceKey> balance_from_string(const std::string& list);
// "vertices,edges"
std::string balance_to_string(const std::vector<BalanceKey>& keys);

struct PartitionOptions {
  Method method = Method::metis;
  std::int64_t num_parts = 1;
  // Quantities each part should get an even share of. Empty = the method's default
  // (default_balance). METIS balances each as one constraint; stream keeps vertices under a hard
  // cap and folds the others into its load term; random balances vertex counts only.
  std::vector<BalanceKey> balance;
  Objective objective = Objective::cut;  // METIS only
  double imbalance = 0.03;               // allowed excess over the mean, per balanced quantity
  std::uint64_t seed = 1;                // METIS and random; the stream method is seed-free
};

// metis and random: {vertices}; stream: {vertices, edges}.
std::vector<BalanceKey> default_balance(Method method);

// Throws InvalidArgument, with the numbers, for parts < 1, parts > num_vertices or greater than
// 2^31 - 1, imbalance outside [0.001, 10), or a balance list with repeats.
void check_partition_options(const PartitionOptions& options, std::int64_t num_vertices);

// What a partitioner reads: the dataset's graph made undirected and simple, and the vertex
// weights of the balanced quantities.
struct PartitionInput {
  std::int64_t num_vertices = 0;
  // Symmetric, sorted, without self loops or duplicate entries, in global ids; heap-owned.
  // The union of all relations in both directions. Empty (0 x 0) for the random method.
  graph::CsrGraph graph;
  std::vector<BalanceKey> balance;  // the keys `weights` holds, in column order
  // num_vertices x balance.size(): vertices 1; edges the vertex's stored in-degree over all
  // relations (the rows it owns in its local graph); train 1 for training vertices, else 0.
  Array<std::int64_t> weights;
};

// Builds the partitioner's input for `options` (after check_partition_options). A homogeneous
// graph that claims to be symmetric and sorted is checked (its entries against their mirrors, by
// a 64-bit fingerprint of each set) and only cleaned of self loops and duplicates; any other
// graph, and every heterogeneous one, is symmetrised through graph::csr_from_coo. Balance keys
// whose weights are all zero (no training vertices, no edges) are dropped with a warning. For
// METIS, graphs past its 32-bit index limit are refused (check_metis_capacity) before the copy.
// Cost: O(E), parallel, deterministic; memory one copy of the adjacency for a clean symmetric
// graph, else about 3 copies of E ids during the symmetrisation.
PartitionInput build_partition_input(const datasets::Dataset& ds, const PartitionOptions& options);

struct PartitionResult {
  Array<std::int32_t> parts;    // part of every global vertex id, in [0, num_parts)
  std::int64_t objective = -1;  // METIS's own objective value (cut or volume of the undirected
                                // simple graph); -1 for the other methods
};

// Dispatches on options.method. Deterministic for a given input and options, whatever the thread
// count.
PartitionResult partition_vertices(const PartitionInput& input, const PartitionOptions& options);

// METIS_PartGraphKway with one constraint per balance key (unit weights passed as none, as
// gpmetis does), METIS_OPTION_SEED = seed, OBJTYPE from the objective, UFACTOR = imbalance * 1000.
// Throws InvalidArgument for input METIS rejects, UnsupportedError when METIS runs out of memory,
// Error for any other failure, each naming the graph's size. Cost: METIS's (multilevel,
// roughly O(E log P)), single-threaded; memory about 3x the adjacency.
PartitionResult metis_partition(const PartitionInput& input, const PartitionOptions& options);

// The largest vertex or adjacency count METIS's idx_t holds (2^31 - 1 for Debian's 32-bit build).
std::int64_t metis_index_max();
// Throws UnsupportedError naming both counts and the limit when a graph of `num_vertices` vertices
// and `adjacency_entries` directed adjacency entries does not fit METIS's idx_t.
void check_metis_capacity(std::int64_t num_vertices, std::int64_t adjacency_entries);

// One-pass Fennel (Tsourakakis et al., WSDM'14) over the vertices in id order: vertex v joins the
// part maximising (its neighbours already there) - alpha * gamma * load^(gamma - 1) * size(v),
// gamma = 1.5, alpha = sqrt(P) * m / n^1.5, where a part's load is its largest share of any
// balanced quantity and size(v) v's mean share, both in vertex units (so a hub weighs more than a
// leaf when edges are balanced). Parts stay below the vertex cap (1 + imbalance) * n / P always,
// and below the same cap in load whenever some part can take v within it. Neighbour counts are
// gathered for batches of vertices in parallel and decided in order, so the result is that of a
// sequential pass whatever the thread count. O(E + V log P) work, O(V + P) memory beyond the input.
Array<std::int32_t> stream_partition(const PartitionInput& input, const PartitionOptions& options);

// A uniformly random assignment with exactly balanced vertex counts (part sizes differ by at
// most one): a Fisher-Yates shuffle of 0, 1, ..., P-1, 0, 1, ... seeded by `seed`. Expected cut
// (P - 1) / P of the edges. O(V), sequential, deterministic.
Array<std::int32_t> random_partition(std::int64_t num_vertices, std::int64_t num_parts, std::uint64_t seed);

}  // namespace halo::partition
