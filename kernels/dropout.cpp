// Dropout dispatch: checks the operands, times the call, runs the CPU or CUDA implementation.
#include "kernels/dropout.hpp"

#include <string>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {
namespace {

void dropout_checked(const char* op, ConstTensorView in, TensorView out, float p, DropoutKey key,
                     IndexView global_ids) {
  detail::check_view(op, "input", in);
  detail::check_shape(op, "output", out, in.rows, in.cols);
  detail::check_device(op, "output", out, in.device);
  HALO_KERNEL_EXPECTS(op, p >= 0.0f && p < 1.0f, "p must be in [0, 1), got " + std::to_string(p));
  HALO_KERNEL_EXPECTS(op, global_ids.data == nullptr || global_ids.size == in.rows,
                      "global_ids must be empty or hold one id per row (" + std::to_string(in.rows) + "), got " +
                          std::to_string(global_ids.size));
  HALO_KERNEL_EXPECTS(op, detail::same_or_disjoint(in, out), "the output must be the input itself or not overlap it");
  ScopedKernelTimer timer(KernelFamily::other, in.device);
  if (in.device.is_cuda()) {
    require_device(in.device);
    cuda::dropout(in, out, p, key, global_ids);
    return;
  }
  cpu::dropout(in, out, p, key, global_ids);
}

}  // namespace

void dropout_forward(ConstTensorView x, TensorView y, float p, DropoutKey key, IndexView global_ids) {
  dropout_checked("dropout_forward", x, y, p, key, global_ids);
}

void dropout_backward(ConstTensorView grad_y, TensorView grad_x, float p, DropoutKey key, IndexView global_ids) {
  dropout_checked("dropout_backward", grad_y, grad_x, p, key, global_ids);
}

}  // namespace halo::kernels
