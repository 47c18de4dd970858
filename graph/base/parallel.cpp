// Parallel exclusive prefix sum: per-thread block sums, a serial scan of the block sums, then a
// second pass that adds each block's offset.
#include "graph/base/parallel.hpp"

#include <vector>

namespace halo {

std::int64_t exclusive_scan_in_place(std::int64_t* data, std::int64_t n) {
  if (n <= 0) return 0;
  if (n < (1 << 16) || max_threads() == 1) {
    std::int64_t sum = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t v = data[i];
      data[i] = sum;
      sum += v;
    }
    return sum;
  }
  std::vector<std::int64_t> block_sum(static_cast<std::size_t>(max_threads()) + 1, 0);
  int used_threads = 1;
  parallel_for_each_thread(0, n, [&](int t, int threads, std::int64_t b, std::int64_t e) {
    std::int64_t sum = 0;
    for (std::int64_t i = b; i < e; ++i) sum += data[i];
    block_sum[static_cast<std::size_t>(t) + 1] = sum;
#pragma omp barrier
#pragma omp single
    {
      used_threads = threads;
      for (int k = 1; k <= threads; ++k) block_sum[k] += block_sum[k - 1];
    }
    std::int64_t run = block_sum[static_cast<std::size_t>(t)];
    for (std::int64_t i = b; i < e; ++i) {
      const std::int64_t v = data[i];
      data[i] = run;
      run += v;
    }
  });
  return block_sum[static_cast<std::size_t>(used_threads)];
}

}  // namespace halo
