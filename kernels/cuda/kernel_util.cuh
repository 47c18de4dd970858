// Building blocks shared by the CUDA kernel files: elementwise launches over a strided window,
// deterministic column sums and array sums (fixed blocking, fixed order, double accumulation, no
// atomics), and the host-side checks of index arrays.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/cuda/check.cuh"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/memory.hpp"
#include "kernels/cuda/runtime.cuh"
#include "kernels/tensor.hpp"

namespace halo::kernels::cuda {

// Calls op(row, col) once for every cell of a rows x cols window; consecutive threads take
// consecutive columns of a row, so strided rows are read and written coalesced. Index is the
// width of the loop's arithmetic: 32 bits (one cheap divide per cell) whenever the window has
// fewer than 2^31 cells, unsigned so that i + step cannot wrap.
template <class Index, class Op>
__global__ void elementwise_kernel(Index rows, Index cols, Op op) {
  const Index n = rows * cols;
  const Index step = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const Index r = i / cols;
    op(static_cast<std::int64_t>(r), static_cast<std::int64_t>(i - r * cols));
  }
}

// The same over a window whose rows are packed: op(0, i) for every flat index i, no divide.
template <class Index, class Op>
__global__ void flat_kernel(Index n, Op op) {
  const Index step = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    op(std::int64_t{0}, static_cast<std::int64_t>(i));
}

// Queues op(row, col) for every cell of a rows x cols window on the GPU's stream. `flat` is the
// caller's promise that op addresses every operand as r * stride + c (no per-row or per-column
// operand) and every stride equals cols: then op(0, r * cols + c) is the same cell, and the
// window runs as one flat array.
template <class Op>
void launch_elementwise(int device, std::int64_t rows, std::int64_t cols, const Op& op, bool flat = false) {
  if (rows == 0 || cols == 0) return;
  const std::int64_t n = rows * cols;
  const cudaStream_t stream = stream_of(device);
  const bool narrow = n < (std::int64_t{1} << 31);
  if (flat && narrow)
    flat_kernel<<<blocks_for(n), threads_per_block, 0, stream>>>(static_cast<std::uint32_t>(n), op);
  else if (flat)
    flat_kernel<<<blocks_for(n), threads_per_block, 0, stream>>>(static_cast<std::uint64_t>(n), op);
  else if (narrow)
    elementwise_kernel<<<blocks_for(n), threads_per_block, 0, stream>>>(static_cast<std::uint32_t>(rows),
                                                                      static_cast<std::uint32_t>(cols), op);
  else
    elementwise_kernel<<<blocks_for(n), threads_per_block, 0, stream>>>(static_cast<std::uint64_t>(rows),
                                                                      static_cast<std::uint64_t>(cols), op);
  HALO_CUDA_CHECK_LAUNCH();
}

// Whether every one of `strides` equals cols: the operands' rows are packed, and a launch may be
// flat (launch_elementwise).
inline bool packed(std::int64_t cols, std::initializer_list<std::int64_t> strides) {
  return std::all_of(strides.begin(), strides.end(), [cols](std::int64_t s) { return s == cols; });
}

// Row blocks of the column sums: their size depends only on the row count (never on the GPU), so
// the sums are the same bits on every run and every GPU model.
inline std::int64_t reduction_rows_per_block(std::int64_t rows) {
  return std::max<std::int64_t>(256, (rows + 1023) / 1024);
}

// partial[(b * W + w) * cols + j] = Σ over rows i of block b, in order, of what term(i, j, acc)
// adds to acc[w].
template <int W, class Term>
__global__ void column_partials_kernel(std::int64_t rows, std::int64_t cols, std::int64_t rows_per_block, Term term,
                                       double* partial) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const std::int64_t b = blockIdx.y;
  const std::int64_t begin = b * rows_per_block;
  const std::int64_t end = begin + rows_per_block < rows ? begin + rows_per_block : rows;
  double acc[W];
#pragma unroll
  for (int w = 0; w < W; ++w) acc[w] = 0.0;
  for (std::int64_t i = begin; i < end; ++i) term(i, j, acc);
#pragma unroll
  for (int w = 0; w < W; ++w) partial[(b * W + w) * cols + j] = acc[w];
}

template <int W>
__global__ void column_finish_kernel(std::int64_t blocks, std::int64_t cols, const double* partial, double* total) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    double s = 0.0;
    for (std::int64_t b = 0; b < blocks; ++b) s += partial[(b * W + w) * cols + j];
    total[w * cols + j] = s;
  }
}

// total[w * cols + j] = Σ_i (what term(i, j, acc) adds to acc[w]), in double, on the device.
// Deterministic: row blocks of reduction_rows_per_block(rows) rows summed in order, then the
// block sums in block order.
template <int W, class Term>
DeviceBuffer<double> column_totals(int device, std::int64_t rows, std::int64_t cols, const Term& term) {
  DeviceBuffer<double> total(device, W * cols);
  if (cols == 0) return total;
  const std::int64_t per_block = reduction_rows_per_block(rows);
  const std::int64_t blocks = std::max<std::int64_t>(1, (rows + per_block - 1) / per_block);
  DeviceBuffer<double> partial(device, blocks * W * cols);
  const cudaStream_t stream = stream_of(device);
  const dim3 grid(static_cast<unsigned int>((cols + threads_per_block - 1) / threads_per_block),
                  static_cast<unsigned int>(blocks));
  column_partials_kernel<W><<<grid, threads_per_block, 0, stream>>>(rows, cols, per_block, term, partial.data());
  HALO_CUDA_CHECK_LAUNCH();
  column_finish_kernel<W><<<grid.x, threads_per_block, 0, stream>>>(blocks, cols, partial.data(), total.data());
  HALO_CUDA_CHECK_LAUNCH();
  return total;
}

// partial[c] = values[c * Chunk .. (c + 1) * Chunk) summed in order. (A template, so that every
// file including this header shares one definition.)
template <std::int64_t Chunk>
__global__ void chunk_sums_kernel(const double* values, std::int64_t n, double* partial) {
  constexpr std::int64_t chunk = Chunk;
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c * chunk >= n) return;
  const std::int64_t end = (c + 1) * chunk < n ? (c + 1) * chunk : n;
  double s = 0.0;
  for (std::int64_t i = c * chunk; i < end; ++i) s += values[i];
  partial[c] = s;
}

// Σ values[0, n) of a device array, in a fixed order (chunks of 1024 in order, then the chunk
// sums in order on the host). Waits for the GPU.
inline double sum_in_order(int device, const double* values, std::int64_t n) {
  if (n <= 0) return 0.0;
  const std::int64_t chunks = (n + 1023) / 1024;
  DeviceBuffer<double> partial(device, chunks);
  chunk_sums_kernel<1024><<<blocks_for(chunks), threads_per_block, 0, stream_of(device)>>>(values, n, partial.data());
  HALO_CUDA_CHECK_LAUNCH();
  std::vector<double> host(static_cast<std::size_t>(chunks));
  download(device, partial.data(), host.data(), chunks);
  double total = 0.0;
  for (const double v : host) total += v;
  return total;
}

// Throws InvalidArgument naming the first entry of index[0, n) outside [0, limit).
inline void check_index_range(const char* op, const std::int64_t* index, std::int64_t n, std::int64_t limit) {
  for (std::int64_t i = 0; i < n; ++i)
    if (index[i] < 0 || index[i] >= limit)
      throw InvalidArgument(std::string(op) + ": index[" + std::to_string(i) + "] = " + std::to_string(index[i]) +
                            " is outside [0, " + std::to_string(limit) + ")");
}

}  // namespace halo::kernels::cuda
