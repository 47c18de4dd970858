// CUDA graph attention, twin of kernels/cpu/attention.cpp: one warp per row (a destination in
// forward and backward's first pass, a source of Aᵀ in its second). Per head, the warp's lanes
// stride over the row's entries for the softmax's maximum and sum (reduced across the warp in a
// fixed butterfly order), then walk the entries in CSR order together, each lane owning 32
// columns apart of the head's width. No atomics: every output is written by one warp, in a
// fixed order, so results are the same on every run (they differ from the CPU's by rounding:
// the sums are ordered differently).
#include <cmath>
#include <cstdint>

#include "kernels/attention.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/attention_warp.cuh"
#include "kernels/cuda/kernel_util.cuh"

namespace halo::kernels::cuda {
namespace {

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
  __device__ float keep(std::int64_t i, std::int64_t j, std::int64_t k) const { return mask.keep(i, j, k); }
  // The dot product of head k of row i of g with head k of row j of h: every lane gets it.
  __device__ float head_dot(const float* g, std::int64_t g_stride, std::int64_t i, std::int64_t j, std::int64_t k,
                            int lane) const {
    return warp_dot(g + i * g_stride + k * width, h + j * h_stride + k * width, width, lane);
  }
};

template <class I>
__global__ void forward_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, Operands o, float* out,
                               std::int64_t out_stride, float* row_max, std::int64_t max_stride, float* row_sum,
                               std::int64_t sum_stride) {
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows; i += warps) {
    const std::int64_t first = indptr[i], last = indptr[i + 1];
    float* y = out + i * out_stride;
    for (std::int64_t k = 0; k < o.heads; ++k) {
      float m = 0.0f, s = 0.0f;
      if (first < last) {
        m = -INFINITY;
        for (std::int64_t e = first + lane; e < last; e += 32) m = fmaxf(m, o.leaky(o.score(i, indices[e], k)));
        m = warp_max(m);
        for (std::int64_t e = first + lane; e < last; e += 32) s += expf(o.leaky(o.score(i, indices[e], k)) - m);
        s = warp_sum(s);
      }
      const float inverse = first < last ? 1.0f / s : 0.0f;
      for (std::int64_t c0 = 0; c0 < o.width; c0 += 32) {
        const std::int64_t c = c0 + lane;
        float acc = 0.0f;
        for (std::int64_t e = first; e < last; ++e) {
          const auto j = static_cast<std::int64_t>(indices[e]);
          const float w = expf(o.leaky(o.score(i, j, k)) - m) * o.keep(i, j, k);
          if (c < o.width) acc += w * o.h[j * o.h_stride + k * o.width + c];
        }
        if (c < o.width) y[k * o.width + c] = acc * inverse;
      }
      if (lane == 0) {
        row_max[i * max_stride + k] = m;
        row_sum[i * sum_stride + k] = s;
      }
    }
  }
}

// Backward's first pass, a warp per destination row i: c = Σ_j α · dα and
// grad_dst = Σ_j α · (dα - c) · leaky'(z) = Σ α dα leaky' - c · Σ α leaky'.
template <class I>
__global__ void dst_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, Operands o,
                           const float* row_max, std::int64_t max_stride, const float* row_sum, std::int64_t sum_stride,
                           const float* grad_out, std::int64_t grad_stride, float* grad_dst, std::int64_t gd_stride,
                           float* c, std::int64_t c_stride) {
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows; i += warps) {
    const std::int64_t first = indptr[i], last = indptr[i + 1];
    for (std::int64_t k = 0; k < o.heads; ++k) {
      const float m = row_max[i * max_stride + k], s = row_sum[i * sum_stride + k];
      float weighted = 0.0f, sloped = 0.0f, sum = 0.0f;
      for (std::int64_t e = first; e < last; ++e) {
        const auto j = static_cast<std::int64_t>(indices[e]);
        const float dot = o.head_dot(grad_out, grad_stride, i, j, k, lane);
        const float z = o.score(i, j, k);
        const float alpha = expf(o.leaky(z) - m) / s;
        const float dalpha = dot * o.keep(i, j, k);
        sum += alpha * dalpha;
        weighted += alpha * dalpha * o.leaky_slope(z);
        sloped += alpha * o.leaky_slope(z);
      }
      if (lane == 0) {
        c[i * c_stride + k] = sum;
        grad_dst[i * gd_stride + k] = weighted - sum * sloped;
      }
    }
  }
}

// Backward's second pass, a warp per source row j of Aᵀ: grad_h and grad_src.
template <class I>
__global__ void src_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, Operands o,
                           const float* row_max, std::int64_t max_stride, const float* row_sum, std::int64_t sum_stride,
                           const float* grad_out, std::int64_t grad_stride, const float* c, std::int64_t c_stride,
                           float* grad_h, std::int64_t gh_stride, float* grad_src, std::int64_t gs_stride) {
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (std::int64_t j = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; j < rows; j += warps) {
    const std::int64_t first = indptr[j], last = indptr[j + 1];
    for (std::int64_t k = 0; k < o.heads; ++k) {
      float gs = 0.0f;
      for (std::int64_t c0 = 0; c0 < o.width; c0 += 32) {
        const std::int64_t col = c0 + lane;
        float acc = 0.0f;
        for (std::int64_t e = first; e < last; ++e) {
          const auto i = static_cast<std::int64_t>(indices[e]);
          const float z = o.score(i, j, k);
          const float alpha = expf(o.leaky(z) - row_max[i * max_stride + k]) / row_sum[i * sum_stride + k];
          const float keep = o.keep(i, j, k);
          if (c0 == 0) {
            const float dalpha = o.head_dot(grad_out, grad_stride, i, j, k, lane) * keep;
            gs += alpha * (dalpha - c[i * c_stride + k]) * o.leaky_slope(z);
          }
          if (col < o.width) acc += alpha * keep * grad_out[i * grad_stride + k * o.width + col];
        }
        if (col < o.width) grad_h[j * gh_stride + k * o.width + col] = acc;
      }
      if (lane == 0) grad_src[j * gs_stride + k] = gs;
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
void attention_backward(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView h,
                        ConstTensorView src, ConstTensorView dst, const AttentionSpec& spec, AttentionIds ids,
                        ConstTensorView row_max, ConstTensorView row_sum, ConstTensorView grad_out, TensorView grad_h,
                        TensorView grad_src, TensorView grad_dst) {
  const int d = h.device.index;
  ScopedDevice scoped(d);
  const Operands o = operands_of(h, src, dst, spec, ids);
  DeviceBuffer<float> c(d, a.num_rows * spec.heads);
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

template void attention_forward(const graph::CsrView<std::int32_t>&, ConstTensorView, ConstTensorView,
                                ConstTensorView, const AttentionSpec&, AttentionIds, TensorView, TensorView,
                                TensorView);
template void attention_forward(const graph::CsrView<std::int64_t>&, ConstTensorView, ConstTensorView,
                                ConstTensorView, const AttentionSpec&, AttentionIds, TensorView, TensorView,
                                TensorView);
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
  launch_elementwise(d, h.rows, h.cols,
                     HeadScoresInputGrad{a.data, a.stride, grad_score.data, grad_score.stride, grad_h.data,
                                         grad_h.stride, a.cols});
  // grad_a as one row of heads · width columns: column c sums grad_score[j, c / width] · h[j, c].
  const DeviceBuffer<double> totals = column_totals<1>(
      d, h.rows, h.cols, HeadScoresWeightTerm{h.data, h.stride, grad_score.data, grad_score.stride, a.cols});
  launch_elementwise(d, a.rows, a.cols, AddTotals{totals.data(), grad_a.data, grad_a.stride, a.cols});
}

}  // namespace halo::kernels::cuda
