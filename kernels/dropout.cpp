// Dropout dispatch: checks the operands, times the call, runs the CPU or CUDA implementation.
#include "kernels/dropout.hpp"

#include <limits>
#include <string>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {
namespace {

void check_dropout(const char* op, ConstTensorView in, TensorView out, float p, std::int64_t ids) {
  detail::check_view(op, "input", in);
  detail::check_shape(op, "output", out, in.rows, in.cols);
  detail::check_device(op, "output", out, in.device);
  HALO_KERNEL_EXPECTS(op, p >= 0.0f && p < 1.0f, "p must be in [0, 1), got " + std::to_string(p));
  HALO_KERNEL_EXPECTS(op, ids == 0 || ids == in.rows,
                      "global_ids must be empty or hold one id per row (" + std::to_string(in.rows) + "), got " +
                          std::to_string(ids));
  HALO_KERNEL_EXPECTS(op, detail::same_or_disjoint(in, out), "the output must be the input itself or not overlap it");
}

void dropout_checked(const char* op, ConstTensorView in, TensorView out, float p, DropoutKey key,
                     IndexView global_ids) {
  check_dropout(op, in, out, p, global_ids.data == nullptr ? 0 : global_ids.size);
  ScopedKernelTimer timer(KernelFamily::other, in.device);
  if (in.device.is_cuda()) {
    require_device(in.device);
    cuda::require_host_memory(op, "global_ids", global_ids.data, in.device.index);
    if (global_ids.data == nullptr) {
      cuda::dropout(in, out, p, key, nullptr);
      return;
    }
    // A per-call upload (through pinned staging); a DeviceIndex avoids it.
    const DeviceIndex ids(global_ids, std::numeric_limits<std::int64_t>::max(), in.device, IndexUse::rows, op);
    cuda::dropout(in, out, p, key, ids.device_entries());
    return;
  }
  cpu::dropout(in, out, p, key, global_ids);
}

void dropout_checked(const char* op, ConstTensorView in, TensorView out, float p, DropoutKey key,
                     const DeviceIndex& global_ids) {
  check_dropout(op, in, out, p, global_ids.size());
  HALO_KERNEL_EXPECTS(op, global_ids.device() == in.device || global_ids.size() == 0,
                      "global_ids are on " + global_ids.device().to_string() + ", the input on " +
                          in.device.to_string());
  ScopedKernelTimer timer(KernelFamily::other, in.device);
  if (in.device.is_cuda()) {
    require_device(in.device);
    cuda::dropout(in, out, p, key, global_ids.device_entries());
    return;
  }
  cpu::dropout(in, out, p, key, global_ids.size() == 0 ? IndexView{} : global_ids.host());
}

void check_bias(const char* op, TensorView y, ConstTensorView bias) {
  if (bias.data == nullptr) return;
  detail::check_view(op, "bias", bias);
  detail::check_shape(op, "bias", bias, 1, y.cols);
  detail::check_device(op, "bias", bias, y.device);
}

}  // namespace

void dropout_forward(ConstTensorView x, TensorView y, float p, DropoutKey key, IndexView global_ids) {
  dropout_checked("dropout_forward", x, y, p, key, global_ids);
}

void dropout_backward(ConstTensorView grad_y, TensorView grad_x, float p, DropoutKey key, IndexView global_ids) {
  dropout_checked("dropout_backward", grad_y, grad_x, p, key, global_ids);
}

void dropout_forward(ConstTensorView x, TensorView y, float p, DropoutKey key, const DeviceIndex& global_ids) {
  dropout_checked("dropout_forward", x, y, p, key, global_ids);
}

void dropout_backward(ConstTensorView grad_y, TensorView grad_x, float p, DropoutKey key,
                      const DeviceIndex& global_ids) {
  dropout_checked("dropout_backward", grad_y, grad_x, p, key, global_ids);
}

void bias_relu_dropout(TensorView y, ConstTensorView bias, float p, DropoutKey key, IndexView global_ids) {
  constexpr const char* op = "bias_relu_dropout";
  check_dropout(op, y, y, p, global_ids.data == nullptr ? 0 : global_ids.size);
  check_bias(op, y, bias);
  ScopedKernelTimer timer(KernelFamily::other, y.device);
  if (y.device.is_cuda()) {
    require_device(y.device);
    cuda::require_host_memory(op, "global_ids", global_ids.data, y.device.index);
    if (global_ids.data == nullptr || p == 0.0f) {
      cuda::bias_relu_dropout(y, bias, p, key, nullptr);
      return;
    }
    const DeviceIndex ids(global_ids, std::numeric_limits<std::int64_t>::max(), y.device, IndexUse::rows, op);
    cuda::bias_relu_dropout(y, bias, p, key, ids.device_entries());
    return;
  }
  cpu::bias_relu_dropout(y, bias, p, key, global_ids);
}

void bias_relu_dropout(TensorView y, ConstTensorView bias, float p, DropoutKey key, const DeviceIndex& global_ids) {
  constexpr const char* op = "bias_relu_dropout";
  check_dropout(op, y, y, p, global_ids.size());
  check_bias(op, y, bias);
  HALO_KERNEL_EXPECTS(op, global_ids.device() == y.device || global_ids.size() == 0,
                      "global_ids are on " + global_ids.device().to_string() + ", the output on " +
                          y.device.to_string());
  ScopedKernelTimer timer(KernelFamily::other, y.device);
  if (y.device.is_cuda()) {
    require_device(y.device);
    cuda::bias_relu_dropout(y, bias, p, key, global_ids.device_entries());
    return;
  }
  cpu::bias_relu_dropout(y, bias, p, key, global_ids.size() == 0 ? IndexView{} : global_ids.host());
}

}  // namespace halo::kernels
