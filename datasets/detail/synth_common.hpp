// Internals of the synthetic generators (datasets/synth.hpp): a keyed random permutation, the
// class-dependent Gaussian features, the random split, and the raw edge stages of each generator
// (exposed so the tests can check the built graph against the pairs it was built from).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "datasets/dataset.hpp"
#include "datasets/synth.hpp"
#include "graph/base/array.hpp"
#include "graph/base/random.hpp"
#include "graph/csr.hpp"

namespace halo::datasets::detail {

// What a random stream decides; mixed into every stream id so that two decisions never share
// random numbers.
enum class SynthPurpose : std::uint64_t {
  classes = 1,
  propensity = 2,
  edges = 3,
  class_means = 4,
  features = 5,
  split = 6,
  vertex_ids = 7,
};

// The random stream of one decision: (purpose, id), id a vertex, class or chunk.
inline std::uint64_t stream_for(SynthPurpose purpose, std::uint64_t id) {
  return stream_id(static_cast<std::uint64_t>(purpose), id);
}

// A pseudo-random bijection of [0, n) keyed on (seed, purpose): a 4-round Feistel network on the
// smallest even number of bits covering n, with cycle walking back into [0, n). O(1) expected per
// call, no memory, so vertex v's image is computed by whichever thread handles v.
class RandomPermutation {
 public:
  RandomPermutation(std::int64_t n, std::uint64_t seed, SynthPurpose purpose);
  std::int64_t operator()(std::int64_t x) const;
  std::int64_t size() const { return n_; }

 private:
  std::uint64_t feistel(std::uint64_t x) const;

  std::int64_t n_;
  int half_bits_ = 1;
  std::uint64_t half_mask_ = 1;
  std::array<std::uint64_t, 4> round_keys_{};
};

// Balanced random classes: vertex v gets class perm(v) mod classes, so class sizes differ by at
// most one.
Array<std::int64_t> balanced_random_classes(std::int64_t n, std::int64_t classes, std::uint64_t seed);

// n x features float32 matrix: row v = mean[labels[v]] + noise * N(0, I), where each class mean
// has i.i.d. N(0, separation^2) entries drawn from the seed. Vertex v's noise comes from its own
// stream, so the matrix does not depend on the thread count. Empty when features == 0.
Array<float> class_gaussian_features(const Array<std::int64_t>& labels, std::int64_t classes, std::int64_t features,
                                     double separation, double noise, std::uint64_t seed);

// A uniformly random split with exactly round(train_fraction * n) train and
// round(valid_fraction * n) valid vertices; the rest are test. Ids ascend within each part.
Split random_split(std::int64_t n, double train_fraction, double valid_fraction, std::uint64_t seed);

// Checks the options the generators share and throws InvalidArgument naming `function`.
void check_feature_options(const char* function, std::int64_t nodes, std::int64_t features, std::int64_t classes,
                           double separation, double noise, double train_fraction, double valid_fraction);

// Assembles the homogeneous dataset the generators return (one vertex type "node").
Dataset make_synthetic_dataset(std::string name, std::string source, graph::CsrGraph graph, bool directed,
                               std::int64_t classes, Array<std::int64_t> labels, Array<float> features,
                               Split split);

// Raw generated edges before the CSR is built: pair e is src[e] -> dst[e]; self loops and
// repeated pairs are still present.
struct EdgePairs {
  Array<std::int32_t> src;
  Array<std::int32_t> dst;
  std::int64_t size() const { return src.size(); }
};

// The stored graph of a generator: the n x n CSR with rows = destinations, self loops and
// repeated pairs dropped, each pair stored both ways when `symmetrize`. Deterministic; costs
// what csr_from_coo costs (O(n + pairs), parallel).
graph::CsrGraph csr_from_pairs(std::int64_t n, const EdgePairs& pairs, bool symmetrize);

// SBM stage: round(nodes * avg_degree / 2) undirected pairs for the given classes.
EdgePairs sbm_edge_pairs(const SbmOptions& options, const Array<std::int64_t>& classes);
// R-MAT stage: round(nodes * edge_factor) directed pairs, vertex ids already permuted.
EdgePairs rmat_edge_pairs(const RmatOptions& options);
// The vertex count an RmatOptions describes (nodes, or 2^scale when nodes is 0).
std::int64_t rmat_vertex_count(const RmatOptions& options);

}  // namespace halo::datasets::detail
