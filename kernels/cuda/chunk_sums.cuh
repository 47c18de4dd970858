// The combine of long rows' chunks summed apart (device_csr.hpp's chunk list), shared by SpMM
// (spmm_kernels.cuh) and the attention kernels (attention_chunks.cuh): each chunk leaves a row of
// partial sums, and the long row's result is their sum in chunk order, so it is deterministic.
// Device code only, which tests/support/cuda_emulator.hpp also compiles for the CPU.
#pragma once

#include <cstdint>

namespace halo::kernels::cuda {

// One output of sums over a row's entries: `cols` columns of `data`, rows `stride` apart.
struct SumOutput {
  float* data;
  std::int64_t stride;
  std::int64_t cols;
};

// At (long row k, c), c over first's columns then second's: the sum in chunk order of column c of
// the partial rows of k's chunks (first.cols + second.cols floats a chunk), written to (with
// `accumulate`, added to) row long_rows[k] of first or second. Launched over the long rows and
// first.cols + second.cols.
struct AddChunks {
  const std::int64_t* long_rows;
  const std::int64_t* chunk_offsets;
  const float* partial;
  SumOutput first;
  SumOutput second;  // cols 0 where there is one output
  bool accumulate;

  __device__ void operator()(std::int64_t k, std::int64_t c) const {
    const std::int64_t stride = first.cols + second.cols;
    float s = 0.0f;
    for (std::int64_t u = chunk_offsets[k]; u < chunk_offsets[k + 1]; ++u) s += partial[u * stride + c];
    const SumOutput& to = c < first.cols ? first : second;
    float& o = to.data[long_rows[k] * to.stride + (c < first.cols ? c : c - first.cols)];
    o = accumulate ? o + s : s;
  }
};

}  // namespace halo::kernels::cuda
