// CUDA scaled dot-product attention, twin of kernels/cpu/dot_attention.cpp: one warp per row (a
// destination in forward and backward's first pass, a source of Aᵀ in its second). Each score
// q_i · k_j is a warp-wide dot product (lane-strided columns, a fixed butterfly: every lane has
// it); the warp walks the row's entries in CSR order, each lane owning columns 32 apart of the
// head's width, and recomputes the scores for every 32-column chunk (heads are rarely wider). No
// atomics: every output is written by one warp in a fixed order, so results are the same on
// every run (they differ from the CPU's by rounding: the sums are ordered differently).
#include <cmath>
#include <cstdint>

#include "kernels/cuda/attention_warp.cuh"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"
#include "kernels/dot_attention.hpp"

namespace halo::kernels::cuda {
namespace {

struct Operands {
  const float* q;
  std::int64_t q_stride;
  const float* k;
  std::int64_t k_stride;
  const float* v;
  std::int64_t v_stride;
  std::int64_t heads;
  std::int64_t key_width;
  std::int64_t value_width;
  DeviceEdgeMask mask;

  // q_i · k_j of head h; every lane gets it.
  __device__ float score(std::int64_t i, std::int64_t j, std::int64_t h, int lane) const {
    return warp_dot(q + i * q_stride + h * key_width, k + j * k_stride + h * key_width, key_width, lane);
  }
  // g_i · v_j of head h (g: the output's gradient); every lane gets it.
  __device__ float value_dot(const float* g, std::int64_t g_stride, std::int64_t i, std::int64_t j, std::int64_t h,
                             int lane) const {
    return warp_dot(g + i * g_stride + h * value_width, v + j * v_stride + h * value_width, value_width, lane);
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
    for (std::int64_t h = 0; h < o.heads; ++h) {
      float m = 0.0f, s = 0.0f;
      if (first < last) {
        m = -INFINITY;
        for (std::int64_t e = first; e < last; ++e) m = fmaxf(m, o.score(i, indices[e], h, lane));
        for (std::int64_t e = first; e < last; ++e) s += expf(o.score(i, indices[e], h, lane) - m);
      }
      const float inverse = first < last ? 1.0f / s : 0.0f;
      for (std::int64_t c0 = 0; c0 < o.value_width; c0 += 32) {
        const std::int64_t c = c0 + lane;
        float acc = 0.0f;
        for (std::int64_t e = first; e < last; ++e) {
          const auto j = static_cast<std::int64_t>(indices[e]);
          const float w = expf(o.score(i, j, h, lane) - m) * o.mask.keep(i, j, h);
          if (c < o.value_width) acc += w * o.v[j * o.v_stride + h * o.value_width + c];
        }
        if (c < o.value_width) out[i * out_stride + h * o.value_width + c] = acc * inverse;
      }
      if (lane == 0) {
        row_max[i * max_stride + h] = m;
        row_sum[i * sum_stride + h] = s;
      }
    }
  }
}

// Backward's first pass, a warp per destination row i: c = Σ_j α · dα and
// grad_query_i = Σ_j α · (dα - c) · k_j.
template <class I>
__global__ void dst_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, Operands o,
                           const float* row_max, std::int64_t max_stride, const float* row_sum, std::int64_t sum_stride,
                           const float* grad_out, std::int64_t grad_stride, float* grad_query, std::int64_t gq_stride,
                           float* c, std::int64_t c_stride) {
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows; i += warps) {
    const std::int64_t first = indptr[i], last = indptr[i + 1];
    for (std::int64_t h = 0; h < o.heads; ++h) {
      const float m = row_max[i * max_stride + h], s = row_sum[i * sum_stride + h];
      const auto alpha = [&](std::int64_t j) { return expf(o.score(i, j, h, lane) - m) / s; };
      const auto dalpha = [&](std::int64_t j) {
        return o.value_dot(grad_out, grad_stride, i, j, h, lane) * o.mask.keep(i, j, h);
      };
      float sum = 0.0f;
      for (std::int64_t e = first; e < last; ++e) {
        const auto j = static_cast<std::int64_t>(indices[e]);
        sum += alpha(j) * dalpha(j);
      }
      for (std::int64_t c0 = 0; c0 < o.key_width; c0 += 32) {
        const std::int64_t col = c0 + lane;
        float acc = 0.0f;
        for (std::int64_t e = first; e < last; ++e) {
          const auto j = static_cast<std::int64_t>(indices[e]);
          const float de = alpha(j) * (dalpha(j) - sum);
          if (col < o.key_width) acc += de * o.k[j * o.k_stride + h * o.key_width + col];
        }
        if (col < o.key_width) grad_query[i * gq_stride + h * o.key_width + col] = acc;
      }
      if (lane == 0) c[i * c_stride + h] = sum;
    }
  }
}

// Backward's second pass, a warp per source row j of Aᵀ: grad_keys and grad_values.
template <class I>
__global__ void src_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, Operands o,
                           const float* row_max, std::int64_t max_stride, const float* row_sum, std::int64_t sum_stride,
                           const float* grad_out, std::int64_t grad_stride, const float* c, std::int64_t c_stride,
                           float* grad_keys, std::int64_t gk_stride, float* grad_values, std::int64_t gv_stride) {
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t widest = o.key_width > o.value_width ? o.key_width : o.value_width;
  for (std::int64_t j = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; j < rows; j += warps) {
    const std::int64_t first = indptr[j], last = indptr[j + 1];
    for (std::int64_t h = 0; h < o.heads; ++h) {
      for (std::int64_t c0 = 0; c0 < widest; c0 += 32) {
        const std::int64_t col = c0 + lane;
        float key_acc = 0.0f, value_acc = 0.0f;
        for (std::int64_t e = first; e < last; ++e) {
          const auto i = static_cast<std::int64_t>(indices[e]);
          const float alpha = expf(o.score(i, j, h, lane) - row_max[i * max_stride + h]) / row_sum[i * sum_stride + h];
          const float keep = o.mask.keep(i, j, h);
          const float dalpha = o.value_dot(grad_out, grad_stride, i, j, h, lane) * keep;
          const float de = alpha * (dalpha - c[i * c_stride + h]);
          if (col < o.key_width) key_acc += de * o.q[i * o.q_stride + h * o.key_width + col];
          if (col < o.value_width) value_acc += alpha * keep * grad_out[i * grad_stride + h * o.value_width + col];
        }
        if (col < o.key_width) grad_keys[j * gk_stride + h * o.key_width + col] = key_acc;
        if (col < o.value_width) grad_values[j * gv_stride + h * o.value_width + col] = value_acc;
      }
    }
  }
}

Operands operands_of(ConstTensorView query, ConstTensorView keys, ConstTensorView values, const DotAttentionSpec& spec,
                     AttentionIds ids) {
  return {query.data,
          query.stride,
          keys.data,
          keys.stride,
          values.data,
          values.stride,
          spec.heads,
          keys.cols / spec.heads,
          values.cols / spec.heads,
          device_edge_mask(spec.dropout, spec.key, ids)};
}

}  // namespace

template <class I>
void dot_attention_forward(const graph::CsrView<I>& a, ConstTensorView query, ConstTensorView keys,
                           ConstTensorView values, const DotAttentionSpec& spec, AttentionIds ids, TensorView out,
                           TensorView row_max, TensorView row_sum) {
  const int d = query.device.index;
  ScopedDevice scoped(d);
  if (a.num_rows == 0) return;
  forward_kernel<I><<<warp_blocks(a.num_rows), threads_per_block, 0, stream_of(d)>>>(
      a.indptr, a.indices, a.num_rows, operands_of(query, keys, values, spec, ids), out.data, out.stride,
      row_max.data, row_max.stride, row_sum.data, row_sum.stride);
  HALO_CUDA_CHECK_LAUNCH();
}

template <class I>
void dot_attention_backward(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView query,
                            ConstTensorView keys, ConstTensorView values, const DotAttentionSpec& spec,
                            AttentionIds ids, ConstTensorView row_max, ConstTensorView row_sum,
                            ConstTensorView grad_out, TensorView grad_query, TensorView grad_keys,
                            TensorView grad_values) {
  const int d = query.device.index;
  ScopedDevice scoped(d);
  const Operands o = operands_of(query, keys, values, spec, ids);
  DeviceBuffer<float> c(d, a.num_rows * spec.heads);
  const cudaStream_t stream = stream_of(d);
  if (a.num_rows > 0) {
    dst_kernel<I><<<warp_blocks(a.num_rows), threads_per_block, 0, stream>>>(
        a.indptr, a.indices, a.num_rows, o, row_max.data, row_max.stride, row_sum.data, row_sum.stride, grad_out.data,
        grad_out.stride, grad_query.data, grad_query.stride, c.data(), spec.heads);
    HALO_CUDA_CHECK_LAUNCH();
  }
  if (at.num_rows > 0) {
    src_kernel<I><<<warp_blocks(at.num_rows), threads_per_block, 0, stream>>>(
        at.indptr, at.indices, at.num_rows, o, row_max.data, row_max.stride, row_sum.data, row_sum.stride,
        grad_out.data, grad_out.stride, c.data(), spec.heads, grad_keys.data, grad_keys.stride, grad_values.data,
        grad_values.stride);
    HALO_CUDA_CHECK_LAUNCH();
  }
}

template void dot_attention_forward(const graph::CsrView<std::int32_t>&, ConstTensorView, ConstTensorView,
                                    ConstTensorView, const DotAttentionSpec&, AttentionIds, TensorView, TensorView,
                                    TensorView);
template void dot_attention_forward(const graph::CsrView<std::int64_t>&, ConstTensorView, ConstTensorView,
                                    ConstTensorView, const DotAttentionSpec&, AttentionIds, TensorView, TensorView,
                                    TensorView);
template void dot_attention_backward(const graph::CsrView<std::int32_t>&, const graph::CsrView<std::int32_t>&,
                                     ConstTensorView, ConstTensorView, ConstTensorView, const DotAttentionSpec&,
                                     AttentionIds, ConstTensorView, ConstTensorView, ConstTensorView, TensorView,
                                     TensorView, TensorView);
template void dot_attention_backward(const graph::CsrView<std::int64_t>&, const graph::CsrView<std::int64_t>&,
                                     ConstTensorView, ConstTensorView, ConstTensorView, const DotAttentionSpec&,
                                     AttentionIds, ConstTensorView, ConstTensorView, ConstTensorView, TensorView,
                                     TensorView, TensorView);

}  // namespace halo::kernels::cuda
