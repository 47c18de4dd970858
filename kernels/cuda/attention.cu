// CUDA graph attention: the launches of the attention kernels (attention_kernels.cuh), with the
// combines of long rows' chunks (attention_chunks.cuh), and the per-head scores a_srcᵀ · h_j and a_dstᵀ · h_i with
// their backward.
#include <cstdint>

#include "kernels/attention.hpp"
#include "kernels/cuda/attention_chunks.cuh"
#include "kernels/cuda/attention_kernels.cuh"
#include "kernels/cuda/attention_launch.cuh"
#include "kernels/cuda/attention_warp.cuh"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/cuda/kernel_util.cuh"

namespace halo::kernels::cuda {
namespace {

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

using gat_kernels::Operands;

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
  const DeviceCsrInfo info = device_csr_of(a, d, "attention_forward");
  if (a.num_rows == 0) return;
  softmax_forward(info, spec.heads, h.cols, out, row_max, row_sum,
                  [&](const RowChunks& chunks, const SoftmaxOutputs& outputs, unsigned int blocks) {
                    gat_kernels::forward_kernel<I><<<blocks, threads_per_block, 0, stream_of(d)>>>(
                        a.indptr, a.indices, a.num_rows, chunks, operands_of(h, src, dst, spec, ids), outputs);
                    HALO_CUDA_CHECK_LAUNCH();
                  });
}

template <class I>
void attention_backward(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView h, ConstTensorView src,
                        ConstTensorView dst, const AttentionSpec& spec, AttentionIds ids, ConstTensorView row_max,
                        ConstTensorView row_sum, ConstTensorView grad_out, TensorView grad_h, TensorView grad_src,
                        TensorView grad_dst) {
  const int d = h.device.index;
  ScopedDevice scoped(d);
  const DeviceCsrInfo info = device_csr_of(a, d, "attention_backward"),
                      info_t = device_csr_of(at, d, "attention_backward");
  const Operands o = operands_of(h, src, dst, spec, ids);
  DeviceBuffer<float> c(d, a.num_rows * attention_workspace_width(spec.heads, true));
  const cudaStream_t stream = stream_of(d);
  if (a.num_rows > 0) {
    const RowChunks chunks = row_chunks(info);
    DeviceBuffer<float> partial(d, chunks.count * 3 * spec.heads);
    const gat_kernels::DstOutputs outputs{grad_dst.data, grad_dst.stride, c.data(),
                                          spec.heads,    partial.data(),  spec.heads};
    gat_kernels::dst_kernel<I><<<warp_blocks(work_items(a.num_rows, chunks)), threads_per_block, 0, stream>>>(
        a.indptr, a.indices, a.num_rows, chunks, o, row_max.data, row_max.stride, row_sum.data, row_sum.stride,
        grad_out.data, grad_out.stride, outputs);
    HALO_CUDA_CHECK_LAUNCH();
    launch_elementwise(d, info.num_long_rows, spec.heads,
                       gat_kernels::CombineDstChunks{info.long_rows, info.chunk_offsets, outputs});
  }
  if (at.num_rows > 0) {
    const RowChunks chunks = row_chunks(info_t);
    DeviceBuffer<float> partial(d, chunks.count * (h.cols + spec.heads));
    const RowSums sums{
        {grad_h.data, grad_h.stride, h.cols}, {grad_src.data, grad_src.stride, spec.heads}, partial.data()};
    gat_kernels::src_kernel<I><<<warp_blocks(work_items(at.num_rows, chunks)), threads_per_block, 0, stream>>>(
        at.indptr, at.indices, at.num_rows, chunks, o, row_max.data, row_max.stride, row_sum.data, row_sum.stride,
        grad_out.data, grad_out.stride, c.data(), spec.heads, sums);
    HALO_CUDA_CHECK_LAUNCH();
    add_chunks(info_t, sums);
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
