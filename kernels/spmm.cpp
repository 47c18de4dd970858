// spmm dispatch: checks the operands, times the call, and runs the CPU or CUDA implementation.
#include "kernels/spmm.hpp"

#include <string>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {
namespace {

template <class I>
void spmm_checked(const graph::CsrView<I>& a, ConstTensorView x, TensorView out, Accumulate mode) {
  detail::check_view("spmm", "x", x);
  detail::check_view("spmm", "out", out);
  HALO_KERNEL_EXPECTS("spmm", a.num_rows >= 0 && a.num_cols >= 0 && a.num_edges >= 0,
                      "the CSR has negative extents " + detail::dims(a.num_rows, a.num_cols) + " with " +
                          std::to_string(a.num_edges) + " edges");
  HALO_KERNEL_EXPECTS("spmm", a.indptr != nullptr || a.num_rows == 0, "the CSR has rows but no indptr");
  HALO_KERNEL_EXPECTS("spmm", a.indices != nullptr || a.num_edges == 0, "the CSR has edges but no indices");
  HALO_KERNEL_EXPECTS("spmm", x.rows == a.num_cols,
                      "x must have one row per CSR column: expected " + std::to_string(a.num_cols) + " rows, got " +
                          std::to_string(x.rows));
  HALO_KERNEL_EXPECTS("spmm", out.rows == a.num_rows && out.cols == x.cols,
                      "out must be " + detail::dims(a.num_rows, x.cols) + ", got " + detail::dims(out));
  detail::check_device("spmm", "out", out, x.device);
  HALO_KERNEL_EXPECTS("spmm", !detail::overlaps(x, out),
                      "out may not overlap x (each output row reads many rows of x)");
  ScopedKernelTimer timer(KernelFamily::spmm, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::spmm(a, x, out, mode);
    return;
  }
  cpu::spmm(a, x, out, mode);
}

}  // namespace

void spmm(const graph::CsrView<std::int32_t>& a, ConstTensorView x, TensorView out, Accumulate mode) {
  spmm_checked(a, x, out, mode);
}

void spmm(const graph::CsrView<std::int64_t>& a, ConstTensorView x, TensorView out, Accumulate mode) {
  spmm_checked(a, x, out, mode);
}

void spmm(const graph::CsrGraph& a, ConstTensorView x, TensorView out, Accumulate mode) {
  graph::visit(a, [&](const auto& view) { spmm_checked(view, x, out, mode); });
}

std::int64_t spmm_library_bytes(Device device) { return device.is_cuda() ? cuda::cusparse_state_bytes() : 0; }

}  // namespace halo::kernels
