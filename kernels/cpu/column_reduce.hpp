// Deterministic parallel sums over rows, in double: the rows are cut into blocks whose size
// depends only on the row count, each block is summed in row order by one thread, and the block
// partials are added in block order. The result is therefore the same on any thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "graph/base/parallel.hpp"

namespace halo::kernels::cpu {

// Returns acc[0, width) = Σ over rows i of the values add_row(i, acc) adds into acc. add_row is
// called exactly once per row (so it may also write per-row outputs).
template <class AddRow>
std::vector<double> reduce_rows(std::int64_t rows, std::int64_t width, AddRow&& add_row) {
  // At most 256 blocks (bounded partial storage), at least 1024 rows each (enough work per block).
  const std::int64_t block_rows = std::max<std::int64_t>(1024, (rows + 255) / 256);
  const std::int64_t blocks = (rows + block_rows - 1) / block_rows;
  const auto w = static_cast<std::size_t>(width);
  std::vector<double> partial(static_cast<std::size_t>(blocks) * w, 0.0);
  parallel_for(
      0, blocks,
      [&](std::int64_t b) {
        double* acc = partial.data() + static_cast<std::size_t>(b) * w;
        const std::int64_t end = std::min(rows, (b + 1) * block_rows);
        for (std::int64_t i = b * block_rows; i < end; ++i) add_row(i, acc);
      },
      1);
  std::vector<double> total(w, 0.0);
  for (std::int64_t b = 0; b < blocks; ++b)
    for (std::size_t j = 0; j < w; ++j) total[j] += partial[static_cast<std::size_t>(b) * w + j];
  return total;
}

}  // namespace halo::kernels::cpu
