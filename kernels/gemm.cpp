// gemm dispatch: checks the operands, times the call, and runs the CPU or CUDA implementation.
#include "kernels/gemm.hpp"

#include <limits>
#include <string>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {

void gemm(ConstTensorView a, Transpose transpose_a, ConstTensorView b, Transpose transpose_b, TensorView c, float alpha,
          float beta) {
  detail::check_view("gemm", "a", a);
  detail::check_view("gemm", "b", b);
  detail::check_view("gemm", "c", c);
  const bool ta = transpose_a == Transpose::yes;
  const bool tb = transpose_b == Transpose::yes;
  const std::int64_t m = ta ? a.cols : a.rows;
  const std::int64_t k = ta ? a.rows : a.cols;
  const std::int64_t kb = tb ? b.cols : b.rows;
  const std::int64_t n = tb ? b.rows : b.cols;
  HALO_EXPECTS(k == kb, std::string("inner dimensions differ: op(a) is ") + detail::dims(m, k) + ", op(b) is " +
                            detail::dims(kb, n));
  HALO_EXPECTS(c.rows == m && c.cols == n, "c must be " + detail::dims(m, n) + ", got " + detail::dims(c));
  detail::check_device("gemm", "b", b, a.device);
  detail::check_device("gemm", "c", c, a.device);
  HALO_EXPECTS(!detail::overlaps(a, c) && !detail::overlaps(b, c), "c may not overlap a or b");
  const auto fits_blas = [](const ConstTensorView& v) {
    constexpr std::int64_t int_max = std::numeric_limits<int>::max();
    return v.rows <= int_max && v.cols <= int_max && v.stride <= int_max;
  };
  HALO_EXPECTS(fits_blas(a) && fits_blas(b) && fits_blas(c), "BLAS takes 32-bit extents and strides, got a " +
                                                                 detail::dims(a) + ", b " + detail::dims(b) + ", c " +
                                                                 detail::dims(c));
  ScopedKernelTimer timer(KernelFamily::gemm, a.device);
  if (a.device.is_cuda()) {
    require_device(a.device);
    cuda::gemm(a, transpose_a, b, transpose_b, c, alpha, beta);
    return;
  }
  cpu::gemm(a, transpose_a, b, transpose_b, c, alpha, beta);
}

}  // namespace halo::kernels
