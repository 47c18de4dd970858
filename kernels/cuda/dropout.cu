// CUDA dropout, twin of kernels/cpu/dropout.cpp: the same Philox blocks (graph/base/random.hpp,
// compiled for the device), the same 16-bit decisions and the same float scale, so the mask and
// the output are bit-identical on both devices. One thread per 8 columns of a row (one Philox
// block).
#include <cmath>
#include <cstdint>

#include "graph/base/random.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"
#include "kernels/dropout.hpp"

namespace halo::kernels::cuda {
namespace {

__global__ void dropout_kernel(const float* x, std::int64_t x_stride, float* y, std::int64_t y_stride,
                               std::int64_t rows, std::int64_t cols, const std::int64_t* global_ids,
                               std::uint64_t key64, std::uint32_t threshold, float scale) {
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
        out[l] = u >= threshold ? in[l] * scale : 0.0f;
      }
    }
  }
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
  // The key, threshold and scale exactly as the CPU twin forms them.
  const std::uint64_t key64 = stream_id(key.seed, key.epoch, key.layer);
  const auto threshold = static_cast<std::uint32_t>(std::ceil(static_cast<double>(p) * 65536.0));
  const float scale = dropout_scale(p);
  const std::int64_t threads = x.rows * ((x.cols + 7) / 8);
  dropout_kernel<<<blocks_for(threads), threads_per_block, 0, stream_of(d)>>>(
      x.data, x.stride, y.data, y.stride, x.rows, x.cols, global_ids, key64, threshold, scale);
  HALO_CUDA_CHECK_LAUNCH();
}

}  // namespace halo::kernels::cuda
