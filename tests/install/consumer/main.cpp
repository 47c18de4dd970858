// Uses an installed halo: builds a small CSR from an edge list and checks its degrees.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "graph/build.hpp"
#include "kernels/device.hpp"

int main() {
  const std::vector<std::int32_t> src = {0, 1, 2, 2};
  const std::vector<std::int32_t> dst = {1, 2, 0, 1};
  halo::graph::CooToCsrOptions options;
  options.symmetrize = true;
  const auto g = halo::graph::csr_from_coo<std::int32_t>(3, 3, dst.data(), src.data(), nullptr, 4, options);
  const auto degrees = halo::graph::row_degrees(g);
  std::printf("vertices %lld edges %lld device %s\n", static_cast<long long>(g.num_rows()),
              static_cast<long long>(g.num_edges()), halo::kernels::Device::cpu().to_string().c_str());
  return (g.num_edges() == 8 && degrees[2] == 3) ? 0 : 1;
}
