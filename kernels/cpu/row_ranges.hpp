// Row ranges of about equal work for the CPU's CSR kernels (SpMM, attention): each range is one
// task of a dynamically scheduled loop, each row handled by one thread, so results do not depend
// on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "graph/csr.hpp"

namespace halo::kernels::cpu {

// Ranges per thread: enough slack for dynamic scheduling to even out rows whose cost the
// nonzero count mispredicts (cache misses), few enough that scheduling costs nothing.
constexpr std::int64_t ranges_per_thread = 4;

// Boundaries of `ranges` row ranges of about equal cost, cost(row) = degree + 1 (the + 1 stands
// for writing the output row, which matters for empty rows).
template <class I>
inline std::vector<std::int64_t> balanced_row_ranges(const graph::CsrView<I>& a, std::int64_t ranges) {
  std::vector<std::int64_t> bounds(static_cast<std::size_t>(ranges) + 1, a.num_rows);
  bounds[0] = 0;
  const std::int64_t total = a.num_edges + a.num_rows;
  for (std::int64_t k = 1; k < ranges; ++k) {
    // total · k / ranges, rounded down, without forming total · k.
    const std::int64_t target = total / ranges * k + total % ranges * k / ranges;
    // The first row whose cumulative cost indptr[row] + row reaches the target.
    std::int64_t lo = 0, hi = a.num_rows;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (a.indptr[mid] + mid < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    bounds[static_cast<std::size_t>(k)] = std::max(lo, bounds[static_cast<std::size_t>(k) - 1]);
  }
  return bounds;
}

}  // namespace halo::kernels::cpu
