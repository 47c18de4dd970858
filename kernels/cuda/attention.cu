// CUDA graph attention, twin of kernels/cpu/attention.cpp: one warp per row (a destination in
// forward and backward's first pass, a source of Aᵀ in its second), its heads taken in blocks of
// up to eight (one Philox draw of the dropout mask serves a block). The work of each entry that is
// one number per head (score, exponential, mask, the dot g_i · h_j) is spread over the lanes, one
// entry each; the sums over a row's entries that are a row of numbers (out, grad_h) walk the row
// in CSR order in chunks of 32 entries, whose coefficients the lanes first leave in shared memory,
// each lane owning columns 32 apart of the block's heads together (GAT's 8 heads of 8 columns
// keep every lane busy). No atomics: every output is written by one warp in a fixed order (a
// row's sums in CSR order, per-head sums over lanes in a fixed butterfly), so results are the same
// on every run (they differ from the CPU's by rounding: the sums are ordered differently).
#include <cmath>
#include <cstdint>

#include "kernels/attention.hpp"
#include "kernels/cuda/attention_warp.cuh"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"

namespace halo::kernels::cuda {
namespace {

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
        float acc[column_blocks] = {};
        sum_by_chunks(indices, first, last, lane, chunk, o.h, o.h_stride, k0 * width, pass, acc, [&](std::int64_t j) {
          std::uint32_t bits[4];
          o.mask.draws(i, j, k0 / head_block, bits);
#pragma unroll
          for (int t = 0; t < head_block; ++t)
            if (t < nh)
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
        float acc[column_blocks] = {};
        sum_by_chunks(
            indices, first, last, lane, chunk, grad_out, grad_stride, k0 * width, pass, acc, [&](std::int64_t i) {
              std::uint32_t bits[4];
              o.mask.draws(i, j, k0 / head_block, bits);
#pragma unroll
              for (int t = 0; t < head_block; ++t) {
                if (t >= nh) continue;
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

// score[j, k] = Σ_f h[j, k·F + f] · a[k, f].
struct HeadScores {
  const float* h;
  std::int64_t h_stride;
  const float* a;
  std::int64_t a_stride;
  float* score;
  std::int64_t score_stride;
  std::int64_t width;
  __device__ void operator()(std::int64_t j, std::int64_t k) const {
    float s = 0.0f;
    for (std::int64_t f = 0; f < width; ++f) s += h[j * h_stride + k * width + f] * a[k * a_stride + f];
    score[j * score_stride + k] = s;
  }
};

// grad_h[j, c] += grad_score[j, c / F] · a[c / F, c % F].
struct HeadScoresInputGrad {
  const float* a;
  std::int64_t a_stride;
  const float* grad_score;
  std::int64_t gs_stride;
  float* grad_h;
  std::int64_t gh_stride;
  std::int64_t width;
  __device__ void operator()(std::int64_t j, std::int64_t c) const {
    const std::int64_t k = c / width;
    grad_h[j * gh_stride + c] += grad_score[j * gs_stride + k] * a[k * a_stride + c - k * width];
  }
};

// The term of column c of row j in grad_a's column sums: grad_score[j, c / F] · h[j, c].
struct HeadScoresWeightTerm {
  const float* h;
  std::int64_t h_stride;
  const float* grad_score;
  std::int64_t gs_stride;
  std::int64_t width;
  __device__ void operator()(std::int64_t j, std::int64_t c, double* acc) const {
    acc[0] += static_cast<double>(grad_score[j * gs_stride + c / width]) * h[j * h_stride + c];
  }
};

// grad_a[k, f] += totals[k · F + f].
struct AddTotals {
  const double* totals;
  float* grad_a;
  std::int64_t stride;
  std::int64_t width;
  __device__ void operator()(std::int64_t k, std::int64_t f) const {
    grad_a[k * stride + f] += static_cast<float>(totals[k * width + f]);
  }
};

Operands operands_of(ConstTensorView h, ConstTensorView src, ConstTensorView dst, const AttentionSpec& spec,
                     AttentionIds ids) {
  return {h.data,
          h.stride,
          src.data,
          src.stride,
          dst.data,
          dst.stride,
          spec.heads,
          h.cols / spec.heads,
          spec.negative_slope,
          device_edge_mask(spec.dropout, spec.key, ids)};
}

}  // namespace

template <class I>
void attention_forward(const graph::CsrView<I>& a, ConstTensorView h, ConstTensorView src, ConstTensorView dst,
                       const AttentionSpec& spec, AttentionIds ids, TensorView out, TensorView row_max,
                       TensorView row_sum) {
  const int d = h.device.index;
  ScopedDevice scoped(d);
  if (a.num_rows == 0) return;
  forward_kernel<I><<<warp_blocks(a.num_rows), threads_per_block, 0, stream_of(d)>>>(
      a.indptr, a.indices, a.num_rows, operands_of(h, src, dst, spec, ids), out.data, out.stride, row_max.data,
      row_max.stride, row_sum.data, row_sum.stride);
  HALO_CUDA_CHECK_LAUNCH();
}

template <class I>
void attention_backward(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView h, ConstTensorView src,
                        ConstTensorView dst, const AttentionSpec& spec, AttentionIds ids, ConstTensorView row_max,
                        ConstTensorView row_sum, ConstTensorView grad_out, TensorView grad_h, TensorView grad_src,
                        TensorView grad_dst) {
  const int d = h.device.index;
  ScopedDevice scoped(d);
  const Operands o = operands_of(h, src, dst, spec, ids);
  DeviceBuffer<float> c(d, a.num_rows * attention_workspace_width(spec.heads, true));
  const cudaStream_t stream = stream_of(d);
  if (a.num_rows > 0) {
    dst_kernel<I><<<warp_blocks(a.num_rows), threads_per_block, 0, stream>>>(
        a.indptr, a.indices, a.num_rows, o, row_max.data, row_max.stride, row_sum.data, row_sum.stride, grad_out.data,
        grad_out.stride, grad_dst.data, grad_dst.stride, c.data(), spec.heads);
    HALO_CUDA_CHECK_LAUNCH();
  }
  if (at.num_rows > 0) {
    src_kernel<I><<<warp_blocks(at.num_rows), threads_per_block, 0, stream>>>(
        at.indptr, at.indices, at.num_rows, o, row_max.data, row_max.stride, row_sum.data, row_sum.stride,
        grad_out.data, grad_out.stride, c.data(), spec.heads, grad_h.data, grad_h.stride, grad_src.data,
        grad_src.stride);
    HALO_CUDA_CHECK_LAUNCH();
  }
}

template void attention_forward(const graph::CsrView<std::int32_t>&, ConstTensorView, ConstTensorView, ConstTensorView,
                                const AttentionSpec&, AttentionIds, TensorView, TensorView, TensorView);
template void attention_forward(const graph::CsrView<std::int64_t>&, ConstTensorView, ConstTensorView, ConstTensorView,
                                const AttentionSpec&, AttentionIds, TensorView, TensorView, TensorView);
template void attention_backward(const graph::CsrView<std::int32_t>&, const graph::CsrView<std::int32_t>&,
                                 ConstTensorView, ConstTensorView, ConstTensorView, const AttentionSpec&, AttentionIds,
                                 ConstTensorView, ConstTensorView, ConstTensorView, TensorView, TensorView, TensorView);
template void attention_backward(const graph::CsrView<std::int64_t>&, const graph::CsrView<std::int64_t>&,
                                 ConstTensorView, ConstTensorView, ConstTensorView, const AttentionSpec&, AttentionIds,
                                 ConstTensorView, ConstTensorView, ConstTensorView, TensorView, TensorView, TensorView);

void head_scores(ConstTensorView h, ConstTensorView a, TensorView score) {
  ScopedDevice scoped(h.device.index);
  launch_elementwise(h.device.index, h.rows, a.rows,
                     HeadScores{h.data, h.stride, a.data, a.stride, score.data, score.stride, a.cols});
}

void head_scores_backward(ConstTensorView h, ConstTensorView a, ConstTensorView grad_score, TensorView grad_h,
                          TensorView grad_a) {
  const int d = h.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(
      d, h.rows, h.cols,
      HeadScoresInputGrad{a.data, a.stride, grad_score.data, grad_score.stride, grad_h.data, grad_h.stride, a.cols});
  // grad_a as one row of heads · width columns: column c sums grad_score[j, c / width] · h[j, c].
  const DeviceBuffer<double> totals = column_totals<1>(
      d, h.rows, h.cols, HeadScoresWeightTerm{h.data, h.stride, grad_score.data, grad_score.stride, a.cols});
  launch_elementwise(d, a.rows, a.cols, AddTotals{totals.data(), grad_a.data, grad_a.stride, a.cols});
}

}  // namespace halo::kernels::cuda
