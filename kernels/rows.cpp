// Row gather / scatter-add dispatch: checks the operands, times the call, runs the CPU or CUDA
// implementation.
#include "kernels/rows.hpp"

#include <string>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {

void gather_rows(ConstTensorView src, IndexView index, TensorView out) {
  detail::check_view("gather_rows", "src", src);
  HALO_EXPECTS(index.size >= 0 && (index.data != nullptr || index.size == 0),
               "index must hold its " + std::to_string(index.size) + " entries");
  detail::check_shape("gather_rows", "out", out, index.size, src.cols);
  detail::check_device("gather_rows", "out", out, src.device);
  HALO_EXPECTS(!detail::overlaps(src, out), "out may not overlap src");
  ScopedKernelTimer timer(KernelFamily::other, src.device);
  if (src.device.is_cuda()) {
    require_device(src.device);
    cuda::gather_rows(src, index, out);
    return;
  }
  cpu::gather_rows(src, index, out);
}

void scatter_add_rows(ConstTensorView src, IndexView index, TensorView out) {
  detail::check_view("scatter_add_rows", "src", src);
  HALO_EXPECTS(index.size == src.rows && (index.data != nullptr || index.size == 0),
               "index must hold one target per row of src: expected " + std::to_string(src.rows) + " entries, got " +
                   std::to_string(index.size));
  detail::check_view("scatter_add_rows", "out", out);
  HALO_EXPECTS(out.cols == src.cols,
               "out must have src's " + std::to_string(src.cols) + " columns, got " + std::to_string(out.cols));
  detail::check_device("scatter_add_rows", "out", out, src.device);
  HALO_EXPECTS(!detail::overlaps(src, out), "out may not overlap src");
  ScopedKernelTimer timer(KernelFamily::other, src.device);
  if (src.device.is_cuda()) {
    require_device(src.device);
    cuda::scatter_add_rows(src, index, out);
    return;
  }
  cpu::scatter_add_rows(src, index, out);
}

}  // namespace halo::kernels
