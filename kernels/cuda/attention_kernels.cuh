// The CUDA graph-attention kernels (GAT's, and RGAT's on its relation blocks), twin of
// kernels/cpu/attention.cpp: one warp per row (a destination in forward and backward's first pass,
// a source of Aᵀ in its second), its heads taken in blocks of up to eight (one Philox draw of the
// dropout mask serves a block). The work of each entry that is one number per head (score,
// exponential, mask, the dot g_i · h_j) is spread over the lanes, one entry each; the sums over a
// row's entries that are a row of numbers (out, grad_h) walk the row in CSR order in chunks of 32
// entries, whose coefficients the lanes first leave in shared memory, each lane owning columns 32
// apart of the block's heads together (GAT's 8 heads of 8 columns keep every lane busy); a block
// wider than one pass of 128 columns is summed in several, each computing the coefficients of the
// heads it reads only. No atomics: every output is written by one warp in a fixed order (a row's
// sums in CSR order, per-head sums over lanes in a fixed butterfly), so results are the same on
// every run (they differ from the CPU's by rounding: the sums are ordered differently).
//
// Device code only: kernels/cuda/attention.cu launches it, and tests/kernels/
// emulated_attention_test.cpp runs the same code on the CPU (tests/support/cuda_emulator.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cuda/attention_warp.cuh"

namespace halo::kernels::cuda::gat_kernels {

// The kernels below are launched with __launch_bounds__(threads_per_block, 2): at most 128
// registers a thread (ptxas: no spills at sm_90), so two blocks, 16 warps, share each SM.

struct Operands {
  const float* h;
  std::int64_t h_stride;
  const float* src;
  std::int64_t src_stride;
  const float* dst;
  std::int64_t dst_stride;
  std::int64_t heads;
  std::int64_t width;
  float slope;
  DeviceEdgeMask mask;

  __device__ float leaky(float z) const { return z > 0.0f ? z : slope * z; }
  __device__ float leaky_slope(float z) const { return z > 0.0f ? 1.0f : slope; }
  __device__ float score(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return src[j * src_stride + k] + dst[i * dst_stride + k];
  }
};

// values[t] for a t known only at run time, without indexing the array (which would move it out
// of registers).
__device__ inline float pick(const float (&values)[head_block], int t) {
  float v = 0.0f;
#pragma unroll
  for (int u = 0; u < head_block; ++u)
    if (u == t) v = values[u];
  return v;
}

template <class I>
__global__ void __launch_bounds__(threads_per_block, 2)
    forward_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, Operands o, float* out,
                   std::int64_t out_stride, float* row_max, std::int64_t max_stride, float* row_sum,
                   std::int64_t sum_stride) {
  __shared__ ChunkCoefficients<head_block> shared[warps_per_block];
  ChunkCoefficients<head_block>& chunk = shared[threadIdx.x / 32];
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int width = static_cast<int>(o.width);
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows; i += warps) {
    const std::int64_t first = indptr[i], last = indptr[i + 1];
    for (std::int64_t k0 = 0; k0 < o.heads; k0 += head_block) {
      const int nh = block_heads(o.heads, k0);
      // The softmax's maximum and sum per head: lanes over entries, then across the warp.
      float m[head_block], s[head_block];
#pragma unroll
      for (int t = 0; t < head_block; ++t) {
        m[t] = first < last ? -INFINITY : 0.0f;
        s[t] = 0.0f;
      }
      for (std::int64_t e = first + lane; e < last; e += 32) {
        const auto j = static_cast<std::int64_t>(indices[e]);
#pragma unroll
        for (int t = 0; t < head_block; ++t)
          if (t < nh) m[t] = fmaxf(m[t], o.leaky(o.score(i, j, k0 + t)));
      }
#pragma unroll
      for (int t = 0; t < head_block; ++t)
        if (t < nh && first < last) m[t] = warp_max(m[t]);
      for (std::int64_t e = first + lane; e < last; e += 32) {
        const auto j = static_cast<std::int64_t>(indices[e]);
#pragma unroll
        for (int t = 0; t < head_block; ++t)
          if (t < nh) s[t] += expf(o.leaky(o.score(i, j, k0 + t)) - m[t]);
      }
#pragma unroll
      for (int t = 0; t < head_block; ++t) {
        if (t < nh && first < last) s[t] = warp_sum(s[t]);
        if (t < nh && lane == 0) {
          row_max[i * max_stride + k0 + t] = m[t];
          row_sum[i * sum_stride + k0 + t] = s[t];
        }
      }
      // out's columns of the block's heads: Σ_j exp(e_ij - max) · keep · h_j in CSR order, over s.
      const int columns = nh * width;
      for (int begin = 0; begin < columns; begin += 32 * column_blocks) {
        const PassColumns pass(begin, columns, width, lane);
        const PassHeads needed(begin, columns, width);  // the coefficients this pass reads
        float acc[column_blocks] = {};
        sum_by_chunks(indices, first, last, lane, chunk, o.h, o.h_stride, k0 * width, pass, acc, [&](std::int64_t j) {
          std::uint32_t bits[4];
          o.mask.draws(i, j, k0 / head_block, bits);
#pragma unroll
          for (int t = 0; t < head_block; ++t)
            if (needed.has(t))
              chunk.weight[t][lane] = expf(o.leaky(o.score(i, j, k0 + t)) - m[t]) * o.mask.keep_of(bits, k0 + t);
        });
#pragma unroll
        for (int r = 0; r < column_blocks; ++r)
          if (pass.column[r] >= 0) {
            const float total = pick(s, pass.head[r]);
            out[i * out_stride + k0 * width + pass.column[r]] = first < last ? acc[r] * (1.0f / total) : 0.0f;
          }
      }
    }
  }
}

// Backward's first pass, a warp per destination row i, lanes over its entries: c = Σ_j α · dα and
// grad_dst = Σ_j α · (dα - c) · leaky'(z) = Σ α dα leaky' - c · Σ α leaky'.
template <class I>
__global__ void __launch_bounds__(threads_per_block, 2)
    dst_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, Operands o, const float* row_max,
               std::int64_t max_stride, const float* row_sum, std::int64_t sum_stride, const float* grad_out,
               std::int64_t grad_stride, float* grad_dst, std::int64_t gd_stride, float* c, std::int64_t c_stride) {
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows; i += warps) {
    const std::int64_t first = indptr[i], last = indptr[i + 1];
    for (std::int64_t k0 = 0; k0 < o.heads; k0 += head_block) {
      const int nh = block_heads(o.heads, k0);
      float m[head_block], s[head_block], sum[head_block], weighted[head_block], sloped[head_block];
#pragma unroll
      for (int t = 0; t < head_block; ++t) {
        m[t] = t < nh ? row_max[i * max_stride + k0 + t] : 0.0f;
        s[t] = t < nh ? row_sum[i * sum_stride + k0 + t] : 1.0f;
        sum[t] = weighted[t] = sloped[t] = 0.0f;
      }
      for (std::int64_t e = first + lane; e < last; e += 32) {
        const auto j = static_cast<std::int64_t>(indices[e]);
        std::uint32_t bits[4];
        o.mask.draws(i, j, k0 / head_block, bits);
#pragma unroll
        for (int t = 0; t < head_block; ++t) {
          if (t >= nh) continue;
          const std::int64_t k = k0 + t;
          const float dot =
              lane_dot(grad_out + i * grad_stride + k * o.width, o.h + j * o.h_stride + k * o.width, o.width);
          const float z = o.score(i, j, k);
          const float alpha = expf(o.leaky(z) - m[t]) / s[t];
          const float dalpha = dot * o.mask.keep_of(bits, k);
          sum[t] += alpha * dalpha;
          weighted[t] += alpha * dalpha * o.leaky_slope(z);
          sloped[t] += alpha * o.leaky_slope(z);
        }
      }
#pragma unroll
      for (int t = 0; t < head_block; ++t) {
        if (t >= nh) continue;
        const float total = warp_sum(sum[t]);
        const float slope_weighted = warp_sum(weighted[t]);
        const float slope_total = warp_sum(sloped[t]);
        if (lane == 0) {
          c[i * c_stride + k0 + t] = total;
          grad_dst[i * gd_stride + k0 + t] = slope_weighted - total * slope_total;
        }
      }
    }
  }
}

// Backward's second pass, a warp per source row j of Aᵀ: grad_h (Σ_i α · keep · g_i in CSR order,
// a chunk of coefficients at a time) and grad_src (lanes over the entries, then across the warp).
template <class I>
__global__ void __launch_bounds__(threads_per_block, 2)
    src_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, Operands o, const float* row_max,
               std::int64_t max_stride, const float* row_sum, std::int64_t sum_stride, const float* grad_out,
               std::int64_t grad_stride, const float* c, std::int64_t c_stride, float* grad_h, std::int64_t gh_stride,
               float* grad_src, std::int64_t gs_stride) {
  __shared__ ChunkCoefficients<head_block> shared[warps_per_block];
  ChunkCoefficients<head_block>& chunk = shared[threadIdx.x / 32];
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int width = static_cast<int>(o.width);
  for (std::int64_t j = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; j < rows; j += warps) {
    const std::int64_t first = indptr[j], last = indptr[j + 1];
    for (std::int64_t k0 = 0; k0 < o.heads; k0 += head_block) {
      const int nh = block_heads(o.heads, k0);
      const int columns = nh * width;
      float gs[head_block] = {};
      // One pass at least, even without columns: the first pass also sums grad_src.
      for (int begin = 0; begin == 0 || begin < columns; begin += 32 * column_blocks) {
        const PassColumns pass(begin, columns, width, lane);
        // The first pass needs every head's α for grad_src; the others, their columns' heads only.
        const PassHeads needed = begin == 0 ? PassHeads(0, nh) : PassHeads(begin, columns, width);
        float acc[column_blocks] = {};
        sum_by_chunks(
            indices, first, last, lane, chunk, grad_out, grad_stride, k0 * width, pass, acc, [&](std::int64_t i) {
              std::uint32_t bits[4];
              o.mask.draws(i, j, k0 / head_block, bits);
#pragma unroll
              for (int t = 0; t < head_block; ++t) {
                if (!needed.has(t)) continue;
                const std::int64_t k = k0 + t;
                const float z = o.score(i, j, k);
                const float alpha = expf(o.leaky(z) - row_max[i * max_stride + k]) / row_sum[i * sum_stride + k];
                const float keep = o.mask.keep_of(bits, k);
                chunk.weight[t][lane] = alpha * keep;
                if (begin == 0) {
                  const float dalpha =
                      lane_dot(grad_out + i * grad_stride + k * o.width, o.h + j * o.h_stride + k * o.width, o.width) *
                      keep;
                  gs[t] += alpha * (dalpha - c[i * c_stride + k]) * o.leaky_slope(z);
                }
              }
            });
#pragma unroll
        for (int r = 0; r < column_blocks; ++r)
          if (pass.column[r] >= 0) grad_h[j * gh_stride + k0 * width + pass.column[r]] = acc[r];
      }
#pragma unroll
      for (int t = 0; t < head_block; ++t) {
        if (t >= nh) continue;
        const float total = warp_sum(gs[t]);
        if (lane == 0) grad_src[j * gs_stride + k0 + t] = total;
      }
    }
  }
}

}  // namespace halo::kernels::cuda::gat_kernels
