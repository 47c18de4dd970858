// Loss and accuracy dispatch: checks the operands, times the call, runs the CPU or CUDA
// implementation.
#include "kernels/loss.hpp"

#include <string>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {

LossSum log_softmax_nll(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                        TensorView grad) {
  detail::check_view("log_softmax_nll", "logits", logits);
  HALO_EXPECTS(logits.cols > 0 || mask.size == 0, "logits need at least one class column");
  HALO_EXPECTS(labels != nullptr || mask.size == 0, "labels are missing");
  HALO_EXPECTS(mask.size >= 0 && (mask.data != nullptr || mask.size == 0),
               "mask must hold its " + std::to_string(mask.size) + " entries");
  if (grad.data != nullptr) {
    detail::check_shape("log_softmax_nll", "grad", grad, logits.rows, logits.cols);
    detail::check_device("log_softmax_nll", "grad", grad, logits.device);
    HALO_EXPECTS(!detail::overlaps(logits, grad), "grad may not overlap logits");
  }
  ScopedKernelTimer timer(KernelFamily::other);
  if (logits.device.is_cuda()) {
    require_device(logits.device);
    return cuda::log_softmax_nll(logits, labels, mask, grad_scale, grad);
  }
  return cpu::log_softmax_nll(logits, labels, mask, grad_scale, grad);
}

std::int64_t count_correct(ConstTensorView logits, const std::int64_t* labels, IndexView mask) {
  detail::check_view("count_correct", "logits", logits);
  HALO_EXPECTS(logits.cols > 0 || mask.size == 0, "logits need at least one class column");
  HALO_EXPECTS(labels != nullptr || mask.size == 0, "labels are missing");
  HALO_EXPECTS(mask.size >= 0 && (mask.data != nullptr || mask.size == 0),
               "mask must hold its " + std::to_string(mask.size) + " entries");
  ScopedKernelTimer timer(KernelFamily::other);
  if (logits.device.is_cuda()) {
    require_device(logits.device);
    return cuda::count_correct(logits, labels, mask);
  }
  return cpu::count_correct(logits, labels, mask);
}

}  // namespace halo::kernels
