// CPU GEMM through OpenBLAS's cblas_sgemm, threaded by halo: c's rows are cut into one band per
// thread and each thread runs one single-threaded OpenBLAS call on its band (OpenBLAS's OpenMP
// build runs single-threaded inside a parallel region). Left to its own threads, OpenBLAS packs
// the whole shared operand into per-thread buffers that it keeps for the life of the process:
// measured with OpenBLAS 0.3.21 (SkylakeX kernels, 2 threads), a 250 000 x 256 by 256 x 256
// product left 187 MiB resident (245 MiB at 4 threads), against under 1 MiB in bands, and the
// bands ran 1.05-1.3x faster on every shape measured (GCN's forward, input and weight gradients,
// 2 708 to 1 000 000 rows). A band's rows are its own GEMM, so c does not depend on the order
// the bands run in; it may on the band boundaries, which depend only on m and the thread count.
// Also kernels/blas_kernels.hpp's blas_core() and blas_config(): only this file includes cblas.h.
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "kernels/blas_kernels.hpp"
#include "kernels/cpu/cpu_kernels.hpp"

namespace halo::kernels {

std::string blas_core() { return openblas_get_corename(); }

std::string blas_config() { return openblas_get_config(); }

}  // namespace halo::kernels

namespace halo::kernels::cpu {
namespace {

// An application that embeds halo and did not restart itself as halo's programs do
// (tools/common/blas_restart.hpp) is told once, at its first product, what it loses.
void warn_of_fallback_kernels() {
  static std::once_flag told;
  std::call_once(told, [] {
    const std::string fitting = fitting_blas_core();
    if (!fitting.empty())
      log_warning(
          fmt::format("OpenBLAS does not know this CPU and runs its {} kernels (SSE3): set "
                      "OPENBLAS_CORETYPE={} before the program starts, and CPU products run several "
                      "times faster",
                      blas_core(), fitting));
  });
}

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

// Products below this many multiply-adds, or with fewer rows than this per band, run as one call:
// an OpenMP region costs microseconds, more than such a product.
constexpr std::int64_t kMinParallelWork = std::int64_t{1} << 18;
constexpr std::int64_t kMinBandRows = 16;

// One band of c's rows: rows [first, first + rows) of op(a) and of c.
void gemm_band(ConstTensorView a, Transpose transpose_a, ConstTensorView b, Transpose transpose_b, TensorView c,
               float alpha, float beta, std::int64_t first, std::int64_t rows) {
  const std::int64_t k = transpose_a == Transpose::no ? a.cols : a.rows;
  // op(a)'s rows are a's rows, or a's columns when a is transposed.
  const float* a_band = transpose_a == Transpose::no ? a.data + first * a.stride : a.data + first;
  cblas_sgemm(CblasRowMajor, transpose_a == Transpose::no ? CblasNoTrans : CblasTrans,
              transpose_b == Transpose::no ? CblasNoTrans : CblasTrans, static_cast<int>(rows),
              static_cast<int>(c.cols), static_cast<int>(k), alpha, a_band, leading_dimension(a), b.data,
              leading_dimension(b), beta, c.data + first * c.stride, leading_dimension(c));
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
  warn_of_fallback_kernels();
  size_openblas_threads();
  const std::int64_t bands = std::max<std::int64_t>(
      1, std::min<std::int64_t>({max_threads(), m / kMinBandRows, m * n * k / kMinParallelWork}));
  if (bands == 1) {
    gemm_band(a, transpose_a, b, transpose_b, c, alpha, beta, 0, m);
    return;
  }
  parallel_for_ranges(
      0, m,
      [&](std::int64_t first, std::int64_t end) {
        gemm_band(a, transpose_a, b, transpose_b, c, alpha, beta, first, end - first);
      },
      (m + bands - 1) / bands);
}

}  // namespace halo::kernels::cpu
