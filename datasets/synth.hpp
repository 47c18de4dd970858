// Synthetic node-classification datasets with learnable labels: a degree-corrected stochastic
// block model (graph-informative labels, tunable homophily) and Graph500-style R-MAT (skewed
// degrees at scale). Both are deterministic per seed, independent of the thread count, parallel,
// and build int32 edge lists, so they reach ogbn-products scale (2.4 M vertices, 120 M+ directed
// edges, 100 features) on a 2-core machine in well under a minute.
#pragma once

#include <cstdint>

#include "datasets/dataset.hpp"

namespace halo::datasets {

// Features shared by both generators: vertex v's features are mean[class(v)] + feature_noise *
// N(0, I), where the class means have i.i.d. N(0, class_separation^2) entries. A nearest-class-
// mean classifier confuses two classes with probability about Phi(-class_separation *
// sqrt(features / 2) / feature_noise), so the defaults leave room for the graph to help.

struct SbmOptions {
  std::int64_t nodes = 10000;      // at most 2^31 - 1
  double avg_degree = 10;          // target mean degree of the stored (symmetric) graph
  std::int64_t features = 32;      // feature width; 0 = no features
  std::int64_t classes = 4;
  double homophily = 0.8;          // probability that an edge joins two vertices of one class
  double degree_exponent = 2.5;    // power-law exponent of the degree propensities (> 1)
  double class_separation = 0.25;  // standard deviation of the class-mean entries
  double feature_noise = 1.0;      // standard deviation of the per-vertex noise
  double train_fraction = 0.6;
  double valid_fraction = 0.2;     // test = the rest
  std::uint64_t seed = 1;
};

// Degree-corrected stochastic block model. Each vertex gets a balanced random class and a
// propensity theta ~ Pareto(degree_exponent - 1) truncated at sqrt(nodes) (so hub-hub pairs do
// not collapse into duplicates). Each of round(nodes * avg_degree / 2) undirected edges picks
// its first endpoint with probability proportional to theta, and its second proportional to
// theta within the same class with probability `homophily`, else within a uniformly chosen other
// class. Stored symmetrised (each edge both ways) without self loops or duplicates, so the mean
// degree is slightly below avg_degree; meta.directed = false, split "random".
// Cost: O(nodes * features + edges) work, parallel; peak memory about the int32 edge list plus
// the CSR and the features. Deterministic in the seed.
Dataset generate_sbm(const SbmOptions& options);

struct RmatOptions {
  int scale = 16;                  // nodes = 2^scale when `nodes` is 0
  std::int64_t nodes = 0;          // any count up to 2^31 - 1; overrides scale when > 0
  double edge_factor = 16;         // generated directed edges = nodes * edge_factor
  double a = 0.57;                 // Graph500 quadrant probabilities; d = 1 - a - b - c
  double b = 0.19;
  double c = 0.19;
  bool symmetrize = true;          // store each edge both ways (meta.directed = false)
  std::int64_t features = 32;
  std::int64_t classes = 4;
  double class_separation = 0.25;
  double feature_noise = 1.0;
  double train_fraction = 0.6;
  double valid_fraction = 0.2;
  std::uint64_t seed = 1;
};

// Graph500-style R-MAT: each of round(nodes * edge_factor) edges descends ceil(log2 nodes)
// levels of the adjacency matrix, picking a quadrant with probabilities a, b, c, d (quantised to
// 2^-16) and redrawing edges that fall outside [0, nodes)^2; vertex ids are then scrambled by a
// seeded permutation so high degree is not concentrated at id 0. Self loops and duplicates are
// dropped. Labels are balanced random classes carried by the features (see synth_rmat.cpp for
// why not by the graph). Cost: O(edges * log nodes + nodes * features), parallel.
// Deterministic in the seed.
Dataset generate_rmat(const RmatOptions& options);

}  // namespace halo::datasets
