// Multi-label loss dispatch: checks the operands, times the call, runs the CPU or CUDA twin.
#include "kernels/multilabel_loss.hpp"

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/loss_mask.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {

LossSum sigmoid_bce(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                    TensorView grad) {
  detail::check_loss_operands("sigmoid_bce", logits, labels, mask, grad);
  ScopedKernelTimer timer(KernelFamily::other, logits.device);
  if (logits.device.is_cuda()) {
    require_device(logits.device);
    return cuda::sigmoid_bce(logits, labels, mask, grad_scale, grad);
  }
  return cpu::sigmoid_bce(logits, labels, mask, grad_scale, grad);
}

}  // namespace halo::kernels
