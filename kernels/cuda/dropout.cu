// CUDA dropout, twin of kernels/cpu/dropout.cpp: the same Philox blocks (graph/base/random.hpp,
// compiled for the device), the same 16-bit decisions and the same float scale, so the mask and
// the output are bit-identical on both devices. One thread per 8 columns of a row (one Philox
// block). bias_relu_dropout's epilogue (relu(y + bias) before the mask) is the CPU's add and select.
#include <cmath>
#include <cstdint>

#include "graph/base/random.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"
#include "kernels/dropout.hpp"

namespace halo::kernels::cuda {
namespace {

// The value before the mask: x, or relu(x + bias) (bias may be null) when `relu`.
__device__ __forceinline__ float before_mask(float v, const float* bias, std::int64_t j, bool relu) {
  if (!relu) return v;
  if (bias != nullptr) v += bias[j];
  return v > 0.0f ? v : 0.0f;
}

__global__ void dropout_kernel(const float* x, std::int64_t x_stride, float* y, std::int64_t y_stride,
                               std::int64_t rows, std::int64_t cols, const std::int64_t* global_ids,
                               std::uint64_t key64, std::uint32_t threshold, float scale, bool relu,
                               const float* bias) {
  const std::int64_t blocks_per_row = (cols + 7) / 8;
  const std::int64_t n = rows * blocks_per_row;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n; t += step) {
    const std::int64_t i = t / blocks_per_row;
    const std::int64_t b = t - i * blocks_per_row;
    const auto g = static_cast<std::uint64_t>(global_ids != nullptr ? global_ids[i] : i);
    std::uint32_t bits[4] = {static_cast<std::uint32_t>(b),
                             static_cast<std::uint32_t>(static_cast<std::uint64_t>(b) >> 32),
                             static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(g >> 32)};
    philox4x32_block(bits[0], bits[1], bits[2], bits[3], key64);
    const std::int64_t j0 = b * 8;
    const std::int64_t lanes = cols - j0 < 8 ? cols - j0 : 8;
    const float* in = x + i * x_stride + j0;
    float* out = y + i * y_stride + j0;
#pragma unroll
    for (int l = 0; l < 8; ++l) {
      if (l < lanes) {
        const std::uint32_t u = (bits[l / 2] >> (16 * (l % 2))) & 0xFFFFu;
        out[l] = u >= threshold ? before_mask(in[l], bias, j0 + l, relu) * scale : 0.0f;
      }
    }
  }
}

// y = relu(y (+ bias)) in place, no mask.
__global__ void bias_relu_kernel(float* y, std::int64_t stride, std::int64_t rows, std::int64_t cols,
                                 const float* bias) {
  const std::int64_t n = rows * cols;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n; t += step) {
    const std::int64_t i = t / cols, j = t - i * cols;
    y[i * stride + j] = before_mask(y[i * stride + j], bias, j, true);
  }
}

// The mask over x into y, with the epilogue when `relu`.
void masked(ConstTensorView x, TensorView y, float p, DropoutKey key, const std::int64_t* global_ids, bool relu,
            const float* bias) {
  // The key, threshold and scale exactly as the CPU twin forms them.
  const std::uint64_t key64 = stream_id(key.seed, key.epoch, key.layer);
  const auto threshold = static_cast<std::uint32_t>(std::ceil(static_cast<double>(p) * 65536.0));
  const float scale = dropout_scale(p);
  const std::int64_t threads = x.rows * ((x.cols + 7) / 8);
  dropout_kernel<<<blocks_for(threads), threads_per_block, 0, stream_of(x.device.index)>>>(
      x.data, x.stride, y.data, y.stride, x.rows, x.cols, global_ids, key64, threshold, scale, relu, bias);
  HALO_CUDA_CHECK_LAUNCH();
}

}  // namespace

void dropout(ConstTensorView x, TensorView y, float p, DropoutKey key, const std::int64_t* global_ids) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  if (x.rows == 0 || x.cols == 0) return;
  if (p == 0.0f) {
    copy(x, y);
    return;
  }
  masked(x, y, p, key, global_ids, false, nullptr);
}

void bias_relu_dropout(TensorView y, ConstTensorView bias, float p, DropoutKey key, const std::int64_t* global_ids) {
  ScopedDevice scoped(y.device.index);
  if (y.rows == 0 || y.cols == 0) return;
  if (p > 0.0f) {
    masked(y, y, p, key, global_ids, true, bias.data);
    return;
  }
  const std::int64_t n = y.rows * y.cols;
  bias_relu_kernel<<<blocks_for(n), threads_per_block, 0, stream_of(y.device.index)>>>(y.data, y.stride, y.rows,
                                                                                       y.cols, bias.data);
  HALO_CUDA_CHECK_LAUNCH();
}

}  // namespace halo::kernels::cuda
