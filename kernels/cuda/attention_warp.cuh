// Building blocks of the CUDA attention kernels (attention.cu, dot_attention.cu), which give one
// warp to each row: warp-wide maximum, sum and dot product (a fixed butterfly, so every lane gets
// the same value and every run the same bits), and the attention-dropout mask of
// kernels/detail/attention_mask.hpp on the device.
#pragma once

#include <cstdint>

#include "kernels/attention.hpp"
#include "kernels/cuda/kernel_util.cuh"
#include "kernels/detail/attention_mask.hpp"
#include "kernels/dropout.hpp"

namespace halo::kernels::cuda {

constexpr unsigned int all_lanes = 0xffffffffu;

__device__ inline float warp_max(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(all_lanes, x, offset));
  return x;
}

__device__ inline float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(all_lanes, x, offset);
  return x;
}

// Σ_f x[f] · y[f] over n values, lane-strided, then summed across the warp.
__device__ inline float warp_dot(const float* x, const float* y, std::int64_t n, int lane) {
  float s = 0.0f;
  for (std::int64_t f = lane; f < n; f += 32) s += x[f] * y[f];
  return warp_sum(s);
}

// The mask of one call: keep(i, j, k) = mask · 1 / (1 - p) of head k of the edge i <- j.
struct DeviceEdgeMask {
  bool dropout;
  std::uint64_t key64;
  std::uint32_t threshold;
  float scale;
  const std::int64_t* dst_ids;  // device arrays; null: the row (column) numbers
  const std::int64_t* src_ids;

  // The draws of heads [8 · block, 8 · block + 8) of the edge i <- j: one Philox block serves
  // the eight (zeros without dropout, which keep_of never reads).
  __device__ void draws(std::int64_t i, std::int64_t j, std::int64_t block, std::uint32_t bits[4]) const {
    if (!dropout) {
      bits[0] = bits[1] = bits[2] = bits[3] = 0;
      return;
    }
    const auto gi = static_cast<std::uint64_t>(dst_ids != nullptr ? dst_ids[i] : i);
    const auto gj = static_cast<std::uint64_t>(src_ids != nullptr ? src_ids[j] : j);
    detail::attention_draws(key64, gi, gj, static_cast<std::uint64_t>(block), bits);
  }
  // keep(i, j, k) from the draws of k's block of heads.
  __device__ float keep_of(const std::uint32_t bits[4], std::int64_t k) const {
    if (!dropout) return 1.0f;
    return detail::attention_kept(bits, k, threshold) ? scale : 0.0f;
  }
  __device__ float keep(std::int64_t i, std::int64_t j, std::int64_t k) const {
    if (!dropout) return 1.0f;
    std::uint32_t bits[4];
    draws(i, j, k / 8, bits);
    return keep_of(bits, k);
  }
};

inline DeviceEdgeMask device_edge_mask(float p, const DropoutKey& key, AttentionIds ids) {
  return {p > 0.0f,
          detail::attention_key64(key),
          detail::attention_threshold(p),
          dropout_scale(p),
          ids.dst != nullptr && ids.dst->size() > 0 ? ids.dst->device_entries() : nullptr,
          ids.src != nullptr && ids.src->size() > 0 ? ids.src->device_entries() : nullptr};
}

// Blocks for one warp per row.
inline unsigned int warp_blocks(std::int64_t rows) { return blocks_for(rows * 32); }

}  // namespace halo::kernels::cuda
