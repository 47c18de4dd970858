// The CUDA graph-attention kernels (GAT's, and RGAT's on its relation blocks), twin of
// kernels/cpu/attention.cpp: one warp per row (a destination in forward and backward's first pass,
// a source of Aᵀ in its second), or per chunk of a row longer than long_row_chunk_entries, whose
// chunks' partial results are then merged (attention_chunks.cuh); its heads taken in blocks of up
// to eight (one Philox draw of the dropout mask serves a block). The work of each entry that is one number per head
// (score, exponential, mask, the dot g_i · h_j) is spread over the lanes, one entry each; the sums over a row's entries
// that are a row of numbers (out, grad_h) walk the row in CSR order in chunks of 32 entries, whose coefficients the
// lanes first leave in shared memory, each lane owning columns 32 apart of the block's heads together (GAT's 8 heads of
// 8 columns keep every lane busy); a block wider than one pass of 128 columns is summed in several, each computing the
// coefficients of the heads it reads only. No atomics: every output is written by one warp in a fixed order (a row's
// sums in CSR order, per-head sums over lanes in a fixed butterfly), so results are the same on
// every run (they differ from the CPU's by rounding: the sums are ordered differently).
//
// Device code only: kernels/cuda/attention.cu launches it, and tests/kernels/
// emulated_attention_test.cpp runs the same code on the CPU (tests/support/cuda_emulator.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cuda/attention_chunks.cuh"
#include "kernels/cuda/attention_warp.cuh"

namespace halo::kernels::cuda::gat_kernels {

// The kernels below are launched with __launch_bounds__(threads_per_block, 2): at most 128
// registers a thread (ptxas: no spills at sm_80 and sm_90), so two blocks, 16 warps, share each SM.

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
    forward_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, RowChunks chunks, Operands o,
                   SoftmaxOutputs outputs) {
  __shared__ ChunkCoefficients<head_block> shared[warps_per_block];
  ChunkCoefficients<head_block>& chunk = shared[threadIdx.x / 32];
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int width = static_cast<int>(o.width);
  for_work_items(indptr, rows, chunks, false, [&](WorkItem item) {
    const std::int64_t i = item.row, first = item.first, last = item.last;
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
        if (t < nh && lane == 0) outputs.stats(item, k0 + t, m[t], s[t]);
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
          if (pass.column[r] >= 0) outputs.column(item, k0 * width + pass.column[r], acc[r], pick(s, pass.head[r]));
      }
    }
  });
}

// Where backward's first pass leaves a work item's sums per head k: a whole row's c = Σ α · dα and
// grad_dst = Σ α dα (leaky' - r) - c · Σ α (leaky' - r) (dst_kernel says what r is); a chunk's
// three sums, in its row of `partial` (3 · heads floats: Σ α · dα, Σ α dα (leaky' - r), Σ α
// (leaky' - r)), for CombineDstChunks.
struct DstOutputs {
  float* grad_dst;
  std::int64_t gd_stride;
  float* c;
  std::int64_t c_stride;
  float* partial;
  std::int64_t heads;

  __device__ void put(const WorkItem& item, std::int64_t k, float total, float slope_weighted,
                      float slope_total) const {
    if (item.whole()) {
      c[item.row * c_stride + k] = total;
      grad_dst[item.row * gd_stride + k] = slope_weighted - total * slope_total;
    } else {
      float* p = partial + item.chunk * (3 * heads);
      p[k] = total;
      p[heads + k] = slope_weighted;
      p[2 * heads + k] = slope_total;
    }
  }
};

// The combine of DstOutputs' chunks at (long row k, head h): each sum in chunk order, then c and
// grad_dst as for a whole row. Launched over the long rows and the heads.
struct CombineDstChunks {
  const std::int64_t* long_rows;
  const std::int64_t* chunk_offsets;
  DstOutputs o;

  __device__ void operator()(std::int64_t k, std::int64_t h) const {
    float total = 0.0f, slope_weighted = 0.0f, slope_total = 0.0f;
    for (std::int64_t u = chunk_offsets[k]; u < chunk_offsets[k + 1]; ++u) {
      const float* p = o.partial + u * 3 * o.heads;
      total += p[h];
      slope_weighted += p[o.heads + h];
      slope_total += p[2 * o.heads + h];
    }
    const std::int64_t i = long_rows[k];
    o.c[i * o.c_stride + h] = total;
    o.grad_dst[i * o.gd_stride + h] = slope_weighted - total * slope_total;
  }
};

// Backward's first pass, a warp per work item of destination rows i, lanes over its entries: c =
// Σ_j α · dα and grad_dst = Σ_j α · (dα - c) · (leaky'(z) - r) = Σ α dα (leaky' - r) - c · Σ α
// (leaky' - r), r the slope of the row's first entry (Σ_j α · (dα - c) is 0, so r changes nothing
// but rounding): a row whose scores all have one sign gets exactly 0, as on the CPU, where its dst
// score cancels in the softmax.
template <class I>
__global__ void __launch_bounds__(threads_per_block, 2)
    dst_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, RowChunks chunks, Operands o,
               const float* row_max, std::int64_t max_stride, const float* row_sum, std::int64_t sum_stride,
               const float* grad_out, std::int64_t grad_stride, DstOutputs outputs) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  for_work_items(indptr, rows, chunks, false, [&](WorkItem item) {
    const std::int64_t i = item.row, first = item.first, last = item.last;
    // The row's first source (a chunk's too), for r; unread for an empty row.
    const std::int64_t j0 = first < last ? static_cast<std::int64_t>(indices[indptr[i]]) : 0;
    for (std::int64_t k0 = 0; k0 < o.heads; k0 += head_block) {
      const int nh = block_heads(o.heads, k0);
      // The row's maximum and sum (and r's score) are read where α is computed (the same address on
      // every lane, from cache), not kept in registers: the kernel has none to spare.
      float sum[head_block], weighted[head_block], sloped[head_block];
#pragma unroll
      for (int t = 0; t < head_block; ++t) sum[t] = weighted[t] = sloped[t] = 0.0f;
      for (std::int64_t e = first + lane; e < last; e += 32) {
        const auto j = static_cast<std::int64_t>(indices[e]);
        std::uint32_t bits[4];
        o.mask.draws(i, j, k0 / head_block, bits);
#pragma unroll
        for (int t = 0; t < head_block; ++t) {
          if (t >= nh) continue;
          const std::int64_t k = k0 + t;
          const float keep = o.mask.keep_of(bits, k);
          const float* gi = grad_out + i * grad_stride + k * o.width;
          const float* hj = o.h + j * o.h_stride + k * o.width;
          const float dalpha = keep != 0.0f ? lane_dot(gi, hj, o.width) * keep : 0.0f;  // h_j unread when dropped
          const float z = o.score(i, j, k);
          const float alpha = expf(o.leaky(z) - row_max[i * max_stride + k]) / row_sum[i * sum_stride + k];
          const float slope = o.leaky_slope(z) - o.leaky_slope(o.score(i, j0, k));
          sum[t] += alpha * dalpha;
          weighted[t] += alpha * dalpha * slope;
          sloped[t] += alpha * slope;
        }
      }
#pragma unroll
      for (int t = 0; t < head_block; ++t) {
        if (t >= nh) continue;
        const float total = warp_sum(sum[t]);
        const float slope_weighted = warp_sum(weighted[t]);
        const float slope_total = warp_sum(sloped[t]);
        if (lane == 0) outputs.put(item, k0 + t, total, slope_weighted, slope_total);
      }
    }
  });
}

// Backward's second pass, a warp per work item of source rows j of Aᵀ: grad_h (Σ_i α · keep · g_i
// in CSR order, a chunk of coefficients at a time) into `sums`' first output and grad_src (lanes
// over the entries, then across the warp) into its second.
template <class I>
__global__ void __launch_bounds__(threads_per_block, 2)
    src_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, RowChunks chunks, Operands o,
               const float* row_max, std::int64_t max_stride, const float* row_sum, std::int64_t sum_stride,
               const float* grad_out, std::int64_t grad_stride, const float* c, std::int64_t c_stride, RowSums sums) {
  // Rows [0, head_block): a chunk's coefficients; row head_block + t: the lane's part of head t's
  // grad_src (in shared memory, not in registers: the kernel has none to spare).
  constexpr int gs_row = head_block;
  __shared__ ChunkCoefficients<2 * head_block> shared[warps_per_block];
  ChunkCoefficients<2 * head_block>& chunk = shared[threadIdx.x / 32];
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int width = static_cast<int>(o.width);
  for_work_items(indptr, rows, chunks, false, [&](WorkItem item) {
    const std::int64_t j = item.row, first = item.first, last = item.last;
    for (std::int64_t k0 = 0; k0 < o.heads; k0 += head_block) {
      const int nh = block_heads(o.heads, k0);
      const int columns = nh * width;
#pragma unroll
      for (int t = 0; t < head_block; ++t) chunk.weight[gs_row + t][lane] = 0.0f;
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
                  const float* gi = grad_out + i * grad_stride + k * o.width;
                  const float* hj = o.h + j * o.h_stride + k * o.width;
                  const float dalpha = keep != 0.0f ? lane_dot(gi, hj, o.width) * keep : 0.0f;  // g_i unread if dropped
                  chunk.weight[gs_row + t][lane] += alpha * (dalpha - c[i * c_stride + k]) * o.leaky_slope(z);
                }
              }
            });
#pragma unroll
        for (int r = 0; r < column_blocks; ++r)
          if (pass.column[r] >= 0) sums.put_first(item, k0 * width + pass.column[r], acc[r]);
      }
#pragma unroll
      for (int t = 0; t < head_block; ++t) {
        if (t >= nh) continue;
        const float total = warp_sum(chunk.weight[gs_row + t][lane]);
        if (lane == 0) sums.put_second(item, k0 + t, total);
      }
    }
  });
}

}  // namespace halo::kernels::cuda::gat_kernels
