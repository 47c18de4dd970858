// CUDA scaled dot-product attention (HGT's): the launches of the kernels of
// dot_attention_kernels.cuh.
#include <cstdint>

#include "kernels/cuda/attention_warp.cuh"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/dot_attention_kernels.cuh"
#include "kernels/cuda/kernel_util.cuh"
#include "kernels/dot_attention.hpp"

namespace halo::kernels::cuda {
namespace {

using dot_kernels::Operands;

Operands operands_of(ConstTensorView query, ConstTensorView keys, ConstTensorView values, const DotAttentionSpec& spec,
                     AttentionIds ids) {
  return {query.data,
          query.stride,
          keys.data,
          keys.stride,
          values.data,
          values.stride,
          spec.heads,
          static_cast<int>(keys.cols / spec.heads),
          static_cast<int>(values.cols / spec.heads),
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
  dot_kernels::forward_kernel<I><<<warp_blocks(a.num_rows), threads_per_block, 0, stream_of(d)>>>(
      a.indptr, a.indices, a.num_rows, operands_of(query, keys, values, spec, ids), out.data, out.stride, row_max.data,
      row_max.stride, row_sum.data, row_sum.stride);
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
    dot_kernels::dst_kernel<I><<<warp_blocks(a.num_rows), threads_per_block, 0, stream>>>(
        a.indptr, a.indices, a.num_rows, o, row_max.data, row_max.stride, row_sum.data, row_sum.stride, grad_out.data,
        grad_out.stride, grad_query.data, grad_query.stride, c.data(), spec.heads);
    HALO_CUDA_CHECK_LAUNCH();
  }
  if (at.num_rows > 0) {
    dot_kernels::src_kernel<I><<<warp_blocks(at.num_rows), threads_per_block, 0, stream>>>(
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
