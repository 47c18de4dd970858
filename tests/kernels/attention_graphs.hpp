// The graphs the attention kernel tests run on: random rows with empty ones, a hub row, self loops
// and repeated edges, in either index width; running a kernel pair on a CSR and its transpose on
// the host or uploaded to a GPU; and NaN where a kernel should not read, in what the dropout drops.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "graph/base/array.hpp"
#include "graph/base/random.hpp"
#include "graph/csr.hpp"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/detail/attention_mask.hpp"
#include "kernels/device.hpp"
#include "kernels/dropout.hpp"
#include "kernels/tensor.hpp"

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

// A copy of x (host rows of a kernel's gathered operand: h, or HGT's values) with NaN in the
// columns of every head k of every row j that is the source of exactly one entry (i, j) of A (a
// row of its transpose `at` with one entry) whose head k the dropout of rate p and `key` drops;
// the mask keyed on `global` when it is not empty (A's rows and columns alike), else on the
// numbers. `poisoned`: how many such slices. A kernel that skips a dropped entry's head reads none
// of them; one that multiplied them by its zero coefficient would spread the NaN.
inline kernels::Tensor nan_in_dropped_slices(const graph::CsrGraph& at, const std::vector<std::int64_t>& global,
                                             const kernels::DropoutKey& key, float p, const kernels::Tensor& x,
                                             std::int64_t heads, std::int64_t& poisoned) {
  kernels::Tensor y = x.clone();
  const std::int64_t width = x.cols() / heads;
  const std::uint64_t key64 = kernels::detail::attention_key64(key);
  const std::uint32_t threshold = kernels::detail::attention_threshold(p);
  const auto id = [&](std::int64_t v) {
    return static_cast<std::uint64_t>(global.empty() ? v : global[static_cast<std::size_t>(v)]);
  };
  poisoned = 0;
  for (std::int64_t j = 0; j < at.num_rows(); ++j) {
    const std::int64_t e = at.indptr()[j];
    if (at.indptr()[j + 1] - e != 1) continue;
    const std::int64_t i =
        at.index_type() == graph::IndexType::i64 ? at.indices<std::int64_t>()[e] : at.indices<std::int32_t>()[e];
    for (std::int64_t k = 0; k < heads; ++k) {
      std::uint32_t bits[4];
      kernels::detail::attention_draws(key64, id(i), id(j), static_cast<std::uint64_t>(k / 8), bits);
      if (kernels::detail::attention_kept(bits, k, threshold)) continue;
      float* slice = y.view().row(j) + k * width;
      std::fill(slice, slice + width, std::numeric_limits<float>::quiet_NaN());
      ++poisoned;
    }
  }
  return y;
}

}  // namespace halo::test
