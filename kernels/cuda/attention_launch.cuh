// The host's side of attention_chunks.cuh, shared by attention.cu and dot_attention.cu: the
// scratch of the chunks' partial results and the launches of the combines that merge them.
#pragma once

#include <cstdint>

#include "kernels/cuda/attention_chunks.cuh"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/cuda/kernel_util.cuh"
#include "kernels/tensor.hpp"

namespace halo::kernels::cuda {

// A forward's softmax over the rows of the DeviceCsr `info` and its long rows' chunks, for outputs
// of `heads` heads and `columns` columns: launch(chunks, outputs, blocks) launches the kernel over
// the work items in `blocks` blocks, then the combine merges the chunks into out, row_max and
// row_sum.
template <class Launch>
void softmax_forward(const DeviceCsrInfo& info, std::int64_t heads, std::int64_t columns, TensorView out,
                     TensorView row_max, TensorView row_sum, const Launch& launch) {
  const RowChunks chunks = row_chunks(info);
  DeviceBuffer<float> partial(info.device, chunks.count * (2 * heads + columns));
  const SoftmaxOutputs outputs = SoftmaxOutputs::of(out, row_max, row_sum, partial.data(), heads, columns);
  launch(chunks, outputs, warp_blocks(work_items(info.num_rows, chunks)));
  launch_elementwise(info.device, info.num_long_rows, columns + heads,
                     CombineSoftmaxChunks{info.long_rows, info.chunk_offsets, outputs, columns / heads});
}

// The sums of `sums`' chunks of the DeviceCsr `info`'s long rows, added up into its outputs.
inline void add_chunks(const DeviceCsrInfo& info, const RowSums& sums) {
  launch_elementwise(info.device, info.num_long_rows, sums.first.cols + sums.second.cols,
                     sums.combine(info.long_rows, info.chunk_offsets));
}

}  // namespace halo::kernels::cuda
