// How the CUDA attention kernels (attention_kernels.cuh, dot_attention_kernels.cuh) share a long
// row among warps, as SpMM does (spmm_kernels.cuh): a row of more than long_row_chunk_entries
// entries is not one warp's work, whatever its length, but one warp's per chunk of DeviceCsr's
// chunk list (device_csr.hpp). A kernel's warps take work items from a grid-stride loop: first
// the chunks, then the rows (a long row skipped). A whole row's results go where they belong; a
// chunk's go to its own row of a scratch array of partial results, which a combine (an
// elementwise launch over the long rows) then merges in chunk order:
//   - a softmax (forward): each chunk leaves its heads' maximum m_u, its sum s_u of exp(e - m_u)
//     and its column sums against m_u; the combine takes M = max m_u, S = Σ s_u · exp(m_u - M) and
//     out = Σ acc_u · exp(m_u - M) / S;
//   - plain sums (backward): the chunks' partial sums are added (chunk_sums.cuh, as SpMM's).
// A vertex of degree 10^6 then holds a warp for 512 entries, not for 10^6, and the results stay
// deterministic: every chunk is one warp's fixed sequence of operations, and every combine adds
// in chunk order. They differ from a whole row's by rounding only.
//
// Device code only (and the host's making of RowChunks from a DeviceCsr), which tests/support/
// cuda_emulator.hpp also compiles for the CPU.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "graph/base/error.hpp"
#include "kernels/cuda/chunk_sums.cuh"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels::cuda {

// The chunks of a CSR's long rows as the kernels take them: chunk u covers entries [begin[u],
// end[u]) of row row[u]; a row of more than `longer_than` entries is done by its chunks only.
struct RowChunks {
  const std::int64_t* row;
  const std::int64_t* begin;
  const std::int64_t* end;
  std::int64_t count;
  std::int64_t longer_than;
};

// The chunk list a DeviceCsr keeps (long_row_chunk_entries entries a chunk). A work item numbers
// its chunk in 32 bits (a register the kernels cannot spare); 2^31 chunks would be 10^12 entries.
inline RowChunks row_chunks(const DeviceCsrInfo& info) {
  HALO_EXPECTS(info.num_chunks <= std::numeric_limits<int>::max(),
               "attention: " + std::to_string(info.num_chunks) + " chunks of long rows, more than 2^31 - 1");
  return {info.chunk_row, info.chunk_begin, info.chunk_end, info.num_chunks, long_row_chunk_entries};
}

// One warp's work: entries [first, last) of row `row`, all of them (chunk -1) or chunk `chunk`'s.
// The chunk is 32-bit, the rest 64: the kernels have no register to spare.
struct WorkItem {
  std::int64_t row;
  std::int64_t first;
  std::int64_t last;
  int chunk;
  __device__ bool whole() const { return chunk < 0; }
};

// The warps launched for the work items of `rows` rows and `chunks` (warp_blocks of this).
inline std::int64_t work_items(std::int64_t rows, const RowChunks& chunks) { return rows + chunks.count; }

// fn(item) for this warp's work items, in a grid-stride loop over the chunks (the largest items,
// first so that none of them is the GPU's last work) and then the rows (a long row skipped); only
// the chunks with `chunks_only`. Every lane of the warp calls fn with the same item.
template <class Fn>
__device__ void for_work_items(const std::int64_t* indptr, std::int64_t rows, const RowChunks& chunks, bool chunks_only,
                               const Fn& fn) {
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) / 32;
  const std::int64_t items = chunks_only ? chunks.count : chunks.count + rows;
  for (std::int64_t w = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; w < items;
       w += warps) {
    if (w < chunks.count) {
      fn(WorkItem{chunks.row[w], chunks.begin[w], chunks.end[w], static_cast<int>(w)});
    } else {
      const std::int64_t i = w - chunks.count, first = indptr[i], last = indptr[i + 1];
      if (last - first <= chunks.longer_than) fn(WorkItem{i, first, last, -1});  // else its chunks do it
    }
  }
}

// Where a forward kernel leaves a softmax over a work item's entries: a whole row's maxima and sums
// per head in row_max and row_sum, and its output (the column sums over the sum; zeros for a row
// without entries) in out; a chunk's in its row of `partial` (2 · heads + columns floats): the
// heads' maxima, their sums of exp(e - maximum), then the column sums against those maxima.
struct SoftmaxOutputs {
  float* out;
  std::int64_t out_stride;
  float* row_max;
  std::int64_t max_stride;
  float* row_sum;
  std::int64_t sum_stride;
  float* partial;
  std::int64_t heads;
  std::int64_t columns;  // out's: heads times the width of a head

  // The outputs of `heads` heads and `columns` columns, and the chunks' scratch.
  static SoftmaxOutputs of(TensorView out, TensorView row_max, TensorView row_sum, float* partial, std::int64_t heads,
                           std::int64_t columns) {
    return {out.data, out.stride, row_max.data, row_max.stride, row_sum.data, row_sum.stride, partial, heads, columns};
  }

  __device__ float* partial_row(const WorkItem& item) const { return partial + item.chunk * (2 * heads + columns); }
  // Head k's maximum m and sum s.
  __device__ void stats(const WorkItem& item, std::int64_t k, float m, float s) const {
    if (item.whole()) {
      row_max[item.row * max_stride + k] = item.first < item.last ? m : 0.0f;
      row_sum[item.row * sum_stride + k] = s;
    } else {
      partial_row(item)[k] = m;
      partial_row(item)[heads + k] = s;
    }
  }
  // Column c's sum `acc` of the coefficients times the gathered rows, `total` its head's sum.
  __device__ void column(const WorkItem& item, std::int64_t c, float acc, float total) const {
    if (item.whole())
      out[item.row * out_stride + c] = item.first < item.last ? acc * (1.0f / total) : 0.0f;
    else
      partial_row(item)[2 * heads + c] = acc;
  }
};

// The combine of a softmax's chunks, at (long row k, c): c < columns is out's column c, columns + h
// head h's maximum and sum. Launched over the long rows and columns + heads.
struct CombineSoftmaxChunks {
  const std::int64_t* long_rows;
  const std::int64_t* chunk_offsets;
  SoftmaxOutputs o;
  std::int64_t width;  // of a head

  __device__ void operator()(std::int64_t k, std::int64_t c) const {
    const std::int64_t stride = 2 * o.heads + o.columns, first = chunk_offsets[k], last = chunk_offsets[k + 1];
    const bool is_column = c < o.columns;
    const std::int64_t h = is_column ? c / width : c - o.columns;
    float top = -INFINITY;
    for (std::int64_t u = first; u < last; ++u) top = fmaxf(top, o.partial[u * stride + h]);
    float total = 0.0f, acc = 0.0f;
    for (std::int64_t u = first; u < last; ++u) {
      const float* p = o.partial + u * stride;
      const float scale = expf(p[h] - top);
      total += p[o.heads + h] * scale;
      if (is_column) acc += p[2 * o.heads + c] * scale;
    }
    const std::int64_t i = long_rows[k];
    if (is_column) {
      o.out[i * o.out_stride + c] = acc * (1.0f / total);
    } else {
      o.row_max[i * o.max_stride + h] = top;
      o.row_sum[i * o.sum_stride + h] = total;
    }
  }
};

// Where a kernel leaves sums over a work item's entries into up to two outputs: a whole row's in
// its row of first and second, a chunk's in its row of `partial` (first's columns, then second's).
struct RowSums {
  SumOutput first;
  SumOutput second;  // cols 0 where there is one output
  float* partial;

  __device__ void put(const WorkItem& item, const SumOutput& to, std::int64_t offset, std::int64_t c, float v) const {
    if (item.whole())
      to.data[item.row * to.stride + c] = v;
    else
      partial[item.chunk * (first.cols + second.cols) + offset + c] = v;
  }
  __device__ void put_first(const WorkItem& item, std::int64_t c, float v) const { put(item, first, 0, c, v); }
  __device__ void put_second(const WorkItem& item, std::int64_t c, float v) const {
    put(item, second, first.cols, c, v);
  }
  // The combine of the chunks' sums into first and second, for the long rows and chunk offsets of
  // the chunk list.
  AddChunks combine(const std::int64_t* long_rows, const std::int64_t* chunk_offsets) const {
    return {long_rows, chunk_offsets, partial, first, second, false};
  }
};

}  // namespace halo::kernels::cuda
