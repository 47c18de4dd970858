// CUDA scaled dot-product attention (HGT's): the launches of the kernels of
// dot_attention_kernels.cuh, with the combines of long rows' chunks (attention_chunks.cuh).
#include <cstdint>

#include "kernels/cuda/attention_chunks.cuh"
#include "kernels/cuda/attention_launch.cuh"
#include "kernels/cuda/attention_warp.cuh"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/device_csr.hpp"
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
  const DeviceCsrInfo info = device_csr_of(a, d, "dot_attention_forward");
  if (a.num_rows == 0) return;
  softmax_forward(info, spec.heads, values.cols, out, row_max, row_sum,
                  [&](const RowChunks& chunks, const SoftmaxOutputs& outputs, unsigned int blocks) {
                    dot_kernels::forward_kernel<I><<<blocks, threads_per_block, 0, stream_of(d)>>>(
                        a.indptr, a.indices, a.num_rows, chunks, operands_of(query, keys, values, spec, ids), outputs);
                    HALO_CUDA_CHECK_LAUNCH();
                  });
}

template <class I>
void dot_attention_backward(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView query,
                            ConstTensorView keys, ConstTensorView values, const DotAttentionSpec& spec,
                            AttentionIds ids, ConstTensorView row_max, ConstTensorView row_sum,
                            ConstTensorView grad_out, TensorView grad_query, TensorView grad_keys,
                            TensorView grad_values) {
  const int d = query.device.index;
  ScopedDevice scoped(d);
  const DeviceCsrInfo info = device_csr_of(a, d, "dot_attention_backward");
  const DeviceCsrInfo info_t = device_csr_of(at, d, "dot_attention_backward");
  const Operands o = operands_of(query, keys, values, spec, ids);
  DeviceBuffer<float> c(d, a.num_rows * spec.heads);
  const cudaStream_t stream = stream_of(d);
  if (a.num_rows > 0) {
    const RowChunks chunks = row_chunks(info);
    DeviceBuffer<float> c_partial(d, chunks.count * spec.heads), query_partial(d, chunks.count * query.cols);
    const RowSums c_sums{{c.data(), spec.heads, spec.heads}, {nullptr, 0, 0}, c_partial.data()};
    const RowSums query_sums{{grad_query.data, grad_query.stride, query.cols}, {nullptr, 0, 0}, query_partial.data()};
    // The whole rows and the chunks' parts of c; with long rows, their c, then the chunks' parts
    // of grad_query.
    const auto launch = [&](bool second_launch, std::int64_t items) {
      dot_kernels::dst_kernel<I><<<warp_blocks(items), threads_per_block, 0, stream>>>(
          a.indptr, a.indices, a.num_rows, chunks, second_launch, o, row_max.data, row_max.stride, row_sum.data,
          row_sum.stride, grad_out.data, grad_out.stride, query_sums, c_sums);
      HALO_CUDA_CHECK_LAUNCH();
    };
    launch(false, work_items(a.num_rows, chunks));
    if (chunks.count > 0) {
      add_chunks(info, c_sums);
      launch(true, chunks.count);
      add_chunks(info, query_sums);
    }
  }
  if (at.num_rows > 0) {
    const RowChunks chunks = row_chunks(info_t);
    DeviceBuffer<float> partial(d, chunks.count * (keys.cols + values.cols));
    const RowSums sums{{grad_keys.data, grad_keys.stride, keys.cols},
                       {grad_values.data, grad_values.stride, values.cols},
                       partial.data()};
    dot_kernels::src_kernel<I><<<warp_blocks(work_items(at.num_rows, chunks)), threads_per_block, 0, stream>>>(
        at.indptr, at.indices, at.num_rows, chunks, o, row_max.data, row_max.stride, row_sum.data, row_sum.stride,
        grad_out.data, grad_out.stride, c.data(), spec.heads, sums);
    HALO_CUDA_CHECK_LAUNCH();
    add_chunks(info_t, sums);
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
