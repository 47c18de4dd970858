// CUDA sigmoid + binary cross-entropy over the labelled entries of a row subset, twin of
// kernels/cpu/multilabel_loss.cpp. The mask and labels are checked on the host exactly as the CPU
// twin checks them; the masked rows and their labels then travel to the GPU. One thread per
// (masked row, task) entry; the entries' losses (8 bytes each) are summed in a fixed order
// (kernel_util.cuh), so the total does not depend on timing.
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"
#include "kernels/detail/loss_mask.hpp"

namespace halo::kernels::cuda {
namespace {

// One (masked row k, task j) entry: its loss into entry_losses[k * tasks + j] (0 when unlabelled)
// and, with grad, its gradient. rows: the n masked rows; labels: their n x tasks labels.
struct BceEntry {
  const float* logits;
  std::int64_t stride;
  std::int64_t tasks;
  const std::int64_t* rows;
  const std::int64_t* labels;
  float grad_scale;
  float* grad;
  std::int64_t grad_stride;
  double* entry_losses;
  __device__ void operator()(std::int64_t k, std::int64_t j) const {
    const std::int64_t y = labels[k * tasks + j];
    double loss = 0.0;
    if (y >= 0) {
      const double x = logits[rows[k] * stride + j];
      loss = fmax(x, 0.0) - x * static_cast<double>(y) + log1p(exp(-fabs(x)));
      if (grad != nullptr)
        grad[rows[k] * grad_stride + j] =
            static_cast<float>((1.0 / (1.0 + exp(-x)) - static_cast<double>(y)) * grad_scale);
    }
    entry_losses[k * tasks + j] = loss;
  }
};

}  // namespace

LossSum sigmoid_bce(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                    TensorView grad) {
  const int d = logits.device.index;
  ScopedDevice scoped(d);
  require_host_memory("sigmoid_bce", "labels", labels, d);
  require_host_memory("sigmoid_bce", "mask", mask.data, d);
  const std::int64_t tasks = logits.cols;
  const bool with_grad = grad.data != nullptr;
  const std::int64_t labelled =
      detail::check_multilabel_mask("sigmoid_bce", logits.rows, tasks, labels, mask, with_grad);
  if (with_grad) fill(d, grad.data, grad.rows, grad.cols, grad.stride, 0.0f);
  const std::int64_t n = mask.size;
  if (n == 0) return LossSum{0.0, 0};
  // [rows (n) | labels (n x tasks)]
  std::vector<std::int64_t> packed(static_cast<std::size_t>(n * (1 + tasks)));
  for (std::int64_t k = 0; k < n; ++k) {
    packed[static_cast<std::size_t>(k)] = mask.data[k];
    for (std::int64_t j = 0; j < tasks; ++j)
      packed[static_cast<std::size_t>(n + k * tasks + j)] = labels[mask.data[k] * tasks + j];
  }
  const DeviceBuffer<std::int64_t> device_packed = upload(d, packed.data(), n * (1 + tasks));
  DeviceBuffer<double> entry_losses(d, n * tasks);
  launch_elementwise(d, n, tasks,
                     BceEntry{logits.data, logits.stride, tasks, device_packed.data(), device_packed.data() + n,
                              grad_scale, with_grad ? grad.data : nullptr, grad.stride, entry_losses.data()});
  return LossSum{sum_in_order(d, entry_losses.data(), n * tasks), labelled};
}

}  // namespace halo::kernels::cuda
