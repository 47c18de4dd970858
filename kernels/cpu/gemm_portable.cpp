// CPU GEMM without a BLAS library (HALO_WITH_BLAS=OFF, e.g. the GPU check's build): a plain loop
// over rows of c in parallel, blocked along k so a panel of op(b) stays in cache. Each value of c
// is summed in increasing k by one thread, so the result does not depend on the thread count.
// Far slower than OpenBLAS on large products; it exists so that builds without OpenBLAS work.
// Also kernels/blas_kernels.hpp's blas_core() and blas_config() for such a build.
#include <algorithm>
#include <vector>

#include "graph/base/parallel.hpp"
#include "kernels/blas_kernels.hpp"
#include "kernels/cpu/cpu_kernels.hpp"

namespace halo::kernels {

std::string blas_core() { return ""; }

std::string blas_config() { return "halo's portable loop (built without BLAS)"; }

}  // namespace halo::kernels

namespace halo::kernels::cpu {

void gemm(ConstTensorView a, Transpose transpose_a, ConstTensorView b, Transpose transpose_b, TensorView c, float alpha,
          float beta) {
  const std::int64_t m = c.rows;
  const std::int64_t n = c.cols;
  const bool ta = transpose_a == Transpose::yes;
  const bool tb = transpose_b == Transpose::yes;
  const std::int64_t k = ta ? a.rows : a.cols;
  if (m == 0 || n == 0) return;
  // Rows of k per block: a block of op(b) rows (k_block x n floats) is reused by every row of c.
  const std::int64_t k_block = std::max<std::int64_t>(1, (64 << 10) / std::max<std::int64_t>(n, 1));
  parallel_for(
      0, m,
      [&](std::int64_t i) {
        std::vector<float> sum(static_cast<std::size_t>(n), 0.0f);
        for (std::int64_t k0 = 0; k0 < k; k0 += k_block) {
          const std::int64_t k1 = std::min(k, k0 + k_block);
          for (std::int64_t p = k0; p < k1; ++p) {
            const float a_ip = ta ? a.row(p)[i] : a.row(i)[p];
            if (tb) {
              for (std::int64_t j = 0; j < n; ++j) sum[static_cast<std::size_t>(j)] += a_ip * b.row(j)[p];
            } else {
              const float* b_row = b.row(p);
              for (std::int64_t j = 0; j < n; ++j) sum[static_cast<std::size_t>(j)] += a_ip * b_row[j];
            }
          }
        }
        float* c_row = c.row(i);
        for (std::int64_t j = 0; j < n; ++j) {
          const float product = alpha * sum[static_cast<std::size_t>(j)];
          c_row[j] = beta == 0.0f ? product : product + beta * c_row[j];
        }
      },
      std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(n * std::max<std::int64_t>(k, 1) / 64, 1)));
}

}  // namespace halo::kernels::cpu
