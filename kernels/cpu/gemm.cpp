// CPU GEMM through OpenBLAS's cblas_sgemm. OpenBLAS runs its own thread pool; it is sized to
// OpenMP's thread count so the two pools together never ask for more cores than OpenMP would.
#include <cblas.h>

#include <algorithm>
#include <atomic>

#include "graph/base/parallel.hpp"
#include "kernels/cpu/cpu_kernels.hpp"

namespace halo::kernels::cpu {
namespace {

// Resizes OpenBLAS's pool when OpenMP's thread count changed since the last call (tests and
// programs may call omp_set_num_threads); a plain call costs one atomic load.
void size_openblas_threads() {
  static std::atomic<int> sized_to{0};
  const int threads = max_threads();
  if (sized_to.exchange(threads) != threads) openblas_set_num_threads(threads);
}

// BLAS wants a leading dimension of at least max(1, cols); the stride of a one-row view is
// never used to step and may be anything.
int leading_dimension(const ConstTensorView& v) {
  return static_cast<int>(v.rows > 1 ? v.stride : std::max<std::int64_t>(v.cols, 1));
}

}  // namespace

void gemm(ConstTensorView a, Transpose transpose_a, ConstTensorView b, Transpose transpose_b, TensorView c, float alpha,
          float beta) {
  const std::int64_t m = c.rows;
  const std::int64_t n = c.cols;
  const std::int64_t k = transpose_a == Transpose::no ? a.cols : a.rows;
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // An empty product: c = beta · c, where beta = 0 clears c whatever it held.
    parallel_for(
        0, m,
        [&](std::int64_t i) {
          float* row = c.row(i);
          for (std::int64_t j = 0; j < n; ++j) row[j] = beta == 0.0f ? 0.0f : beta * row[j];
        },
        256);
    return;
  }
  size_openblas_threads();
  cblas_sgemm(CblasRowMajor, transpose_a == Transpose::no ? CblasNoTrans : CblasTrans,
              transpose_b == Transpose::no ? CblasNoTrans : CblasTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a.data, leading_dimension(a), b.data, leading_dimension(b), beta, c.data,
              leading_dimension(c));
}

}  // namespace halo::kernels::cpu
