// CUDA log-softmax + NLL and accuracy over a row subset, twins of kernels/cpu/loss.cpp. The mask
// and labels are checked on the host exactly as the CPU twin checks them; then only the masked
// rows' ids and labels travel to the GPU (every call, or once for a LossRows: the _prepared
// entry points). One warp per masked row; per-row losses are summed in a
// fixed order (kernel_util.cuh), so the total does not depend on timing.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"
#include "kernels/detail/loss_mask.hpp"

namespace halo::kernels::cuda {
namespace {

constexpr unsigned int full_warp = 0xffffffffu;

// The masked rows and their labels, [rows (n) | labels (n)], after the CPU twin's checks.
std::vector<std::int64_t> checked_rows_and_labels(const char* op, std::int64_t rows, std::int64_t classes,
                                                  const std::int64_t* labels, IndexView mask, bool require_distinct) {
  detail::check_loss_mask(op, rows, classes, labels, mask, require_distinct);
  const std::int64_t n = mask.size;
  std::vector<std::int64_t> packed(static_cast<std::size_t>(2 * n));
  for (std::int64_t k = 0; k < n; ++k) {
    packed[static_cast<std::size_t>(k)] = mask.data[k];
    packed[static_cast<std::size_t>(n + k)] = labels[mask.data[k]];
  }
  return packed;
}

__global__ void nll_kernel(const float* logits, std::int64_t stride, std::int64_t classes, const std::int64_t* rows,
                           const std::int64_t* labels, std::int64_t n, float grad_scale, float* grad,
                           std::int64_t grad_stride, double* losses) {
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (std::int64_t k = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; k < n; k += warps) {
    const std::int64_t r = rows[k];
    const std::int64_t label = labels[k];
    const float* z = logits + r * stride;
    float shift = z[0];
    for (std::int64_t j = lane; j < classes; j += 32) shift = fmaxf(shift, z[j]);
    for (int offset = 16; offset > 0; offset /= 2) shift = fmaxf(shift, __shfl_xor_sync(full_warp, shift, offset));
    double sum = 0.0;
    for (std::int64_t j = lane; j < classes; j += 32) sum += exp(static_cast<double>(z[j]) - shift);
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(full_warp, sum, offset);
    const double log_sum = log(__shfl_sync(full_warp, sum, 0));
    if (lane == 0) losses[k] = log_sum - (static_cast<double>(z[label]) - shift);
    if (grad != nullptr) {
      float* g = grad + r * grad_stride;
      for (std::int64_t j = lane; j < classes; j += 32) {
        const double softmax = exp(static_cast<double>(z[j]) - shift - log_sum);
        g[j] = static_cast<float>((softmax - (j == label ? 1.0 : 0.0)) * grad_scale);
      }
    }
  }
}

// The CPU twin's arg-max: the first index of the largest non-NaN value, or 0 when z[0] is NaN
// (its running comparison never moves past a NaN start) or every value is NaN.
__global__ void correct_kernel(const float* logits, std::int64_t stride, std::int64_t classes, const std::int64_t* rows,
                               const std::int64_t* labels, std::int64_t n, unsigned long long* correct) {
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (std::int64_t k = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; k < n; k += warps) {
    const float* z = logits + rows[k] * stride;
    float best_value = 0.0f;
    std::int64_t best = -1;
    for (std::int64_t j = lane; j < classes; j += 32) {
      const float v = z[j];
      if (!isnan(v) && (best < 0 || v > best_value)) {
        best_value = v;
        best = j;
      }
    }
    for (int offset = 16; offset > 0; offset /= 2) {
      const float other_value = __shfl_xor_sync(full_warp, best_value, offset);
      const std::int64_t other = __shfl_xor_sync(full_warp, best, offset);
      const bool take =
          other >= 0 && (best < 0 || other_value > best_value || (other_value == best_value && other < best));
      if (take) {
        best_value = other_value;
        best = other;
      }
    }
    if (isnan(z[0]) || best < 0) best = 0;
    if (lane == 0 && best == labels[k]) atomicAdd(correct, 1ull);
  }
}

}  // namespace

LossSum log_softmax_nll_prepared(ConstTensorView logits, const std::int64_t* rows, const std::int64_t* labels,
                                 std::int64_t n, float grad_scale, TensorView grad) {
  const int d = logits.device.index;
  ScopedDevice scoped(d);
  const bool with_grad = grad.data != nullptr;
  if (with_grad) fill(d, grad.data, grad.rows, grad.cols, grad.stride, 0.0f);
  if (n == 0) return LossSum{0.0, 0};
  DeviceBuffer<double> losses(d, n);
  nll_kernel<<<blocks_for(n * 32), threads_per_block, 0, stream_of(d)>>>(logits.data, logits.stride, logits.cols,
                                                                         rows, labels, n, grad_scale,
                                                                         with_grad ? grad.data : nullptr, grad.stride,
                                                                         losses.data());
  HALO_CUDA_CHECK_LAUNCH();
  return LossSum{sum_in_order(d, losses.data(), n), n};
}

std::int64_t count_correct_prepared(ConstTensorView logits, const std::int64_t* rows, const std::int64_t* labels,
                                    std::int64_t n) {
  const int d = logits.device.index;
  ScopedDevice scoped(d);
  if (n == 0) return 0;
  DeviceBuffer<unsigned long long> correct(d, 1);
  const cudaStream_t stream = stream_of(d);
  HALO_CUDA_TRY(cudaMemsetAsync(correct.data(), 0, sizeof(unsigned long long), stream));
  correct_kernel<<<blocks_for(n * 32), threads_per_block, 0, stream>>>(logits.data, logits.stride, logits.cols, rows,
                                                                       labels, n, correct.data());
  HALO_CUDA_CHECK_LAUNCH();
  unsigned long long host = 0;
  download(d, correct.data(), &host, 1);
  return static_cast<std::int64_t>(host);
}

LossSum log_softmax_nll(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                        TensorView grad) {
  const int d = logits.device.index;
  ScopedDevice scoped(d);
  require_host_memory("log_softmax_nll", "labels", labels, d);
  require_host_memory("log_softmax_nll", "mask", mask.data, d);
  const std::vector<std::int64_t> packed = checked_rows_and_labels("log_softmax_nll", logits.rows, logits.cols, labels,
                                                                   mask, grad.data != nullptr);
  const std::int64_t n = mask.size;
  if (n == 0) return log_softmax_nll_prepared(logits, nullptr, nullptr, 0, grad_scale, grad);
  const DeviceBuffer<std::int64_t> device_packed = upload(d, packed.data(), 2 * n);
  return log_softmax_nll_prepared(logits, device_packed.data(), device_packed.data() + n, n, grad_scale, grad);
}

std::int64_t count_correct(ConstTensorView logits, const std::int64_t* labels, IndexView mask) {
  const int d = logits.device.index;
  ScopedDevice scoped(d);
  require_host_memory("count_correct", "labels", labels, d);
  require_host_memory("count_correct", "mask", mask.data, d);
  const std::vector<std::int64_t> packed =
      checked_rows_and_labels("count_correct", logits.rows, logits.cols, labels, mask, false);
  const std::int64_t n = mask.size;
  if (n == 0) return 0;
  const DeviceBuffer<std::int64_t> device_packed = upload(d, packed.data(), 2 * n);
  return count_correct_prepared(logits, device_packed.data(), device_packed.data() + n, n);
}

}  // namespace halo::kernels::cuda
