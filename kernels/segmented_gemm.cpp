// segmented_gemm dispatch: checks every segment and the aliasing rules between them, times the
// call, and runs the CPU or CUDA implementation; and the waves the CUDA implementation runs.
#include "kernels/segmented_gemm.hpp"

#include <cstddef>
#include <limits>
#include <string>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {
namespace {

bool same_window(const TensorView& x, const TensorView& y) {
  return x.data == y.data && x.rows == y.rows && x.cols == y.cols && (x.stride == y.stride || x.rows <= 1);
}

bool fits_blas(const ConstTensorView& v) {
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  return v.rows <= int_max && v.cols <= int_max && v.stride <= int_max;
}

void check_segment(const GemmSegment& s, const std::string& label, bool ta, bool tb, const Device& device) {
  const char* op = "segmented_gemm";
  detail::check_view(op, (label + " a").c_str(), s.a);
  detail::check_view(op, (label + " b").c_str(), s.b);
  detail::check_view(op, (label + " c").c_str(), s.c);
  const std::int64_t m = ta ? s.a.cols : s.a.rows;
  const std::int64_t k = ta ? s.a.rows : s.a.cols;
  const std::int64_t kb = tb ? s.b.cols : s.b.rows;
  const std::int64_t n = tb ? s.b.rows : s.b.cols;
  HALO_KERNEL_EXPECTS(
      op, k == kb,
      label + ": inner dimensions differ: op(a) is " + detail::dims(m, k) + ", op(b) is " + detail::dims(kb, n));
  HALO_KERNEL_EXPECTS(op, s.c.rows == m && s.c.cols == n,
                      label + " c must be " + detail::dims(m, n) + ", got " + detail::dims(s.c));
  detail::check_device(op, (label + " a").c_str(), s.a, device);
  detail::check_device(op, (label + " b").c_str(), s.b, device);
  detail::check_device(op, (label + " c").c_str(), s.c, device);
  HALO_KERNEL_EXPECTS(op, fits_blas(s.a) && fits_blas(s.b) && fits_blas(s.c),
                      label + ": BLAS takes 32-bit extents and strides, got a " + detail::dims(s.a) + ", b " +
                          detail::dims(s.b) + ", c " + detail::dims(s.c));
}

}  // namespace

void segmented_gemm(const std::vector<GemmSegment>& segments, Transpose transpose_a, Transpose transpose_b, float alpha,
                    float beta) {
  if (segments.empty()) return;
  const bool ta = transpose_a == Transpose::yes;
  const bool tb = transpose_b == Transpose::yes;
  const Device device = segments.front().a.device;
  for (std::size_t s = 0; s < segments.size(); ++s)
    check_segment(segments[s], "segment " + std::to_string(s), ta, tb, device);
  // Quadratic in the segment count, which is a handful of relations or vertex types.
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const TensorView& c = segments[s].c;
    for (std::size_t t = 0; t < segments.size(); ++t) {
      HALO_EXPECTS(!detail::overlaps(segments[t].a, c) && !detail::overlaps(segments[t].b, c),
                   "the output of segment " + std::to_string(s) + " overlaps an input of segment " + std::to_string(t));
      HALO_EXPECTS(t <= s || same_window(c, segments[t].c) || !detail::overlaps(c, segments[t].c),
                   "the outputs of segments " + std::to_string(s) + " and " + std::to_string(t) +
                       " overlap without being the same window");
    }
  }
  ScopedKernelTimer timer(KernelFamily::gemm, device);
  if (device.is_cuda()) {
    require_device(device);
    cuda::segmented_gemm(segments, transpose_a, transpose_b, alpha, beta);
    return;
  }
  cpu::segmented_gemm(segments, transpose_a, transpose_b, alpha, beta);
}

std::vector<std::vector<std::size_t>> segmented_gemm_waves(const std::vector<GemmSegment>& segments) {
  std::vector<std::vector<std::size_t>> waves;
  for (std::size_t s = 0; s < segments.size(); ++s) {
    std::size_t wave = 0;
    for (std::size_t t = 0; t < s; ++t) wave += same_window(segments[s].c, segments[t].c) ? 1 : 0;
    if (wave == waves.size()) waves.emplace_back();
    waves[wave].push_back(s);
  }
  return waves;
}

}  // namespace halo::kernels
