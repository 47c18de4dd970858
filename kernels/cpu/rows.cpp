// CPU row gather and scatter-add. Scatter-add needs no atomics: every task owns a block of
// columns and a range of target rows, and walks the index list in order, so each output value
// receives its additions in increasing source row whatever the thread count.
#include <algorithm>
#include <cstring>
#include <string>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/row_loop.hpp"

namespace halo::kernels::cpu {
namespace {

// Throws InvalidArgument naming the first index outside [0, rows).
void check_indices(const char* op, IndexView index, std::int64_t rows) {
  const std::int64_t bad =
      parallel_find_first(0, index.size, [&](std::int64_t i) { return index.data[i] < 0 || index.data[i] >= rows; });
  if (bad != index.size)
    throw InvalidArgument(std::string(op) + ": index[" + std::to_string(bad) +
                          "] = " + std::to_string(index.data[bad]) + " is outside [0, " + std::to_string(rows) + ")");
}

// Columns per block: one 64-byte cache line of floats.
constexpr std::int64_t column_block = 16;

}  // namespace

void gather_rows(ConstTensorView src, IndexView index, TensorView out) {
  check_indices("gather_rows", index, src.rows);
  if (src.cols == 0) return;
  const std::size_t row_bytes = static_cast<std::size_t>(src.cols) * sizeof(float);
  for_rows(index.size, src.cols, [&](std::int64_t i) { std::memcpy(out.row(i), src.row(index.data[i]), row_bytes); });
}

void scatter_add_rows(ConstTensorView src, IndexView index, TensorView out) {
  check_indices("scatter_add_rows", index, out.rows);
  const std::int64_t cols = src.cols;
  if (cols == 0 || index.size == 0) return;
  // Column blocks first (tasks touching disjoint columns of a row seldom share a cache line),
  // then target ranges when there are fewer column blocks than threads. Each task scans the
  // whole index list, 8 bytes per source row, little next to the rows it adds.
  const std::int64_t threads = max_threads();
  const std::int64_t blocks = (cols + column_block - 1) / column_block;
  const std::int64_t column_tasks = std::min(blocks, threads);
  const std::int64_t target_tasks = (threads + column_tasks - 1) / column_tasks;
  const std::int64_t targets = out.rows;
  parallel_for(
      0, column_tasks * target_tasks,
      [&](std::int64_t task) {
        const std::int64_t ct = task % column_tasks;
        const std::int64_t tt = task / column_tasks;
        const std::int64_t col_begin = blocks * ct / column_tasks * column_block;
        const std::int64_t col_end = std::min(cols, blocks * (ct + 1) / column_tasks * column_block);
        const std::int64_t target_begin = targets * tt / target_tasks;
        const std::int64_t target_end = targets * (tt + 1) / target_tasks;
        for (std::int64_t i = 0; i < index.size; ++i) {
          const std::int64_t t = index.data[i];
          if (t < target_begin || t >= target_end) continue;
          float* __restrict o = out.row(t);
          const float* __restrict s = src.row(i);
          for (std::int64_t j = col_begin; j < col_end; ++j) o[j] += s[j];
        }
      },
      1);
}

}  // namespace halo::kernels::cpu
