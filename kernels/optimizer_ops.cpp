// Optimiser-step dispatch: checks the operands, times the call, runs the CPU or CUDA
// implementation.
#include "kernels/optimizer_ops.hpp"

#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {

void adam_step(TensorView param, ConstTensorView grad, TensorView m, TensorView v, const AdamHyper& h,
               std::int64_t step) {
  detail::check_view("adam_step", "param", param);
  detail::check_shape("adam_step", "grad", grad, param.rows, param.cols);
  detail::check_shape("adam_step", "m", m, param.rows, param.cols);
  detail::check_shape("adam_step", "v", v, param.rows, param.cols);
  for (const ConstTensorView& t : {grad, ConstTensorView(m), ConstTensorView(v)})
    detail::check_device("adam_step", "every operand", t, param.device);
  HALO_EXPECTS(step >= 1, "step counts from 1, got " + std::to_string(step));
  HALO_EXPECTS(h.beta1 >= 0.0f && h.beta1 < 1.0f && h.beta2 >= 0.0f && h.beta2 < 1.0f,
               "betas must be in [0, 1), got " + std::to_string(h.beta1) + " and " + std::to_string(h.beta2));
  HALO_EXPECTS(!detail::overlaps(param, grad) && !detail::overlaps(param, m) && !detail::overlaps(param, v) &&
                   !detail::overlaps(m, v) && !detail::overlaps(m, grad) && !detail::overlaps(v, grad),
               "param, grad, m and v must be four separate tensors");
  ScopedKernelTimer timer(KernelFamily::other);
  if (param.device.is_cuda()) {
    require_device(param.device);
    cuda::adam_step(param, grad, m, v, h, step);
    return;
  }
  cpu::adam_step(param, grad, m, v, h, step);
}

void adam_step_rows(TensorView param, ConstTensorView grad, TensorView m, TensorView v, IndexView rows,
                    const std::int64_t* steps, const AdamHyper& h) {
  detail::check_view("adam_step_rows", "param", param);
  detail::check_shape("adam_step_rows", "grad", grad, param.rows, param.cols);
  detail::check_shape("adam_step_rows", "m", m, param.rows, param.cols);
  detail::check_shape("adam_step_rows", "v", v, param.rows, param.cols);
  for (const ConstTensorView& t : {grad, ConstTensorView(m), ConstTensorView(v)})
    detail::check_device("adam_step_rows", "every operand", t, param.device);
  HALO_EXPECTS(h.beta1 >= 0.0f && h.beta1 < 1.0f && h.beta2 >= 0.0f && h.beta2 < 1.0f,
               "betas must be in [0, 1), got " + std::to_string(h.beta1) + " and " + std::to_string(h.beta2));
  if (param.device.is_cuda()) {
    // The row list and step counts are read on the host below, on every device.
    require_device(param.device);
    cuda::require_host_memory("adam_step_rows", "rows", rows.data, param.device.index);
    cuda::require_host_memory("adam_step_rows", "steps", steps, param.device.index);
  }
  std::vector<bool> seen(static_cast<std::size_t>(param.rows), false);
  for (std::int64_t k = 0; k < rows.size; ++k) {
    const std::int64_t r = rows.data[k];
    HALO_EXPECTS(r >= 0 && r < param.rows && !seen[static_cast<std::size_t>(r)],
                 "row " + std::to_string(r) + " is out of range [0, " + std::to_string(param.rows) + ") or repeated");
    HALO_EXPECTS(steps[k] >= 1,
                 "steps count from 1, got " + std::to_string(steps[k]) + " for row " + std::to_string(r));
    seen[static_cast<std::size_t>(r)] = true;
  }
  ScopedKernelTimer timer(KernelFamily::other);
  if (param.device.is_cuda()) {
    require_device(param.device);
    cuda::adam_step_rows(param, grad, m, v, rows, steps, h);
    return;
  }
  cpu::adam_step_rows(param, grad, m, v, rows, steps, h);
}

void sgd_step(TensorView param, ConstTensorView grad, TensorView momentum, const SgdHyper& h, std::int64_t step) {
  detail::check_view("sgd_step", "param", param);
  detail::check_shape("sgd_step", "grad", grad, param.rows, param.cols);
  detail::check_device("sgd_step", "grad", grad, param.device);
  HALO_EXPECTS(step >= 1, "step counts from 1, got " + std::to_string(step));
  HALO_EXPECTS(!detail::overlaps(param, grad), "param and grad must be separate tensors");
  if (h.momentum != 0.0f) {
    detail::check_shape("sgd_step", "momentum", momentum, param.rows, param.cols);
    detail::check_device("sgd_step", "momentum", momentum, param.device);
    HALO_EXPECTS(!detail::overlaps(momentum, param) && !detail::overlaps(momentum, grad),
                 "the momentum buffer must be a separate tensor");
  }
  ScopedKernelTimer timer(KernelFamily::other);
  if (param.device.is_cuda()) {
    require_device(param.device);
    cuda::sgd_step(param, grad, momentum, h, step);
    return;
  }
  cpu::sgd_step(param, grad, momentum, h, step);
}

}  // namespace halo::kernels
