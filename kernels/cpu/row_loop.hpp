// The row loop of the CPU's row-by-row kernels: rows in parallel, in chunks of about 16 K values,
// so narrow and wide tensors both get chunks worth scheduling. Each row is handled by one thread.
#pragma once

#include <algorithm>
#include <cstdint>

#include "graph/base/parallel.hpp"

namespace halo::kernels::cpu {

// Calls fn(row) for every row of a rows x cols tensor.
template <class F>
void for_rows(std::int64_t rows, std::int64_t cols, F&& fn) {
  parallel_for(0, rows, fn, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(cols, 1)));
}

}  // namespace halo::kernels::cpu
