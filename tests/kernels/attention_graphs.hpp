// The graphs the attention kernel tests run on: random rows with empty ones, a hub row, self loops
// and repeated edges, in either index width; and running a kernel pair on a CSR and its transpose
// on the host or uploaded to a GPU.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "graph/base/array.hpp"
#include "graph/base/random.hpp"
#include "graph/csr.hpp"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/device.hpp"

namespace halo::test {

// A random n x n graph: a fifth of the rows empty, row `hub` with `hub_degree` entries, the
// others 1..9 (repeats and, the graph being square, self loops happen). With `sink` >= 0, every
// row with entries has a first one in column `sink`: a long row of the transpose.
inline graph::CsrGraph hub_graph(std::uint64_t seed, std::int64_t n, std::int64_t hub, std::int64_t hub_degree,
                                 bool wide, std::int64_t sink = -1) {
  RandomStream rng(seed, 1);
  std::vector<std::int64_t> indptr{0}, indices;
  for (std::int64_t r = 0; r < n; ++r) {
    std::int64_t degree = rng.below(5) == 0 ? 0 : 1 + static_cast<std::int64_t>(rng.below(9));
    if (r == hub) degree = hub_degree;
    for (std::int64_t e = 0; e < degree; ++e)
      indices.push_back(sink >= 0 && e == 0 ? sink
                                            : static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n))));
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  if (wide)
    return graph::CsrGraph(n, n, Array<std::int64_t>::from_vector(indptr), Array<std::int64_t>::from_vector(indices));
  std::vector<std::int32_t> narrow(indices.begin(), indices.end());
  return graph::CsrGraph(n, n, Array<std::int64_t>::from_vector(indptr), Array<std::int32_t>::from_vector(narrow));
}

// go(a, at) with views of the same index width of a and at: the host's on the CPU, else uploaded
// to `device` as kernels::cuda::DeviceCsr (kept for the call).
template <class Go>
void with_csr_pair(const graph::CsrGraph& host_a, const graph::CsrGraph& host_at, const kernels::Device& device,
                   Go&& go) {
  if (!device.is_cuda()) {
    graph::visit(host_a, [&](const auto& a) {
      if constexpr (std::is_same_v<std::decay_t<decltype(a)>, graph::CsrView<std::int32_t>>)
        go(a, host_at.view<std::int32_t>());
      else
        go(a, host_at.view<std::int64_t>());
    });
    return;
  }
  const kernels::cuda::DeviceCsr a(host_a, device), at(host_at, device);
  a.visit([&](const auto& av) {
    at.visit([&](const auto& atv) {
      if constexpr (std::is_same_v<std::decay_t<decltype(av)>, std::decay_t<decltype(atv)>>) go(av, atv);
    });
  });
}

}  // namespace halo::test
