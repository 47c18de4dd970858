// Uses an installed halo's CPU modules only: builds a small CSR from an edge list and checks its
// degrees, then generates an SBM dataset and checks its size.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "datasets/synth.hpp"
#include "graph/build.hpp"

int main() {
  const std::vector<std::int32_t> src = {0, 1, 2, 2};
  const std::vector<std::int32_t> dst = {1, 2, 0, 1};
  halo::graph::CooToCsrOptions options;
  options.symmetrize = true;
  const auto g = halo::graph::csr_from_coo<std::int32_t>(3, 3, dst.data(), src.data(), nullptr, 4, options);
  const auto degrees = halo::graph::row_degrees(g);
  halo::datasets::SbmOptions sbm;
  sbm.nodes = 300;
  sbm.features = 8;
  const halo::datasets::Dataset ds = halo::datasets::generate_sbm(sbm);
  std::printf("csr: %lld vertices, %lld edges; sbm: %lld vertices, %lld edges\n", static_cast<long long>(g.num_rows()),
              static_cast<long long>(g.num_edges()), static_cast<long long>(ds.num_vertices()),
              static_cast<long long>(ds.num_edges()));
  return (g.num_edges() == 8 && degrees[2] == 3 && ds.num_vertices() == 300) ? 0 : 1;
}
