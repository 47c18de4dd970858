// Building blocks of the CUDA attention kernels (attention.cu, dot_attention.cu), which give one
// warp to each row (or chunk of a long row: attention_chunks.cuh) and take its heads in blocks of
// head_block: warp-wide maximum and sum (a fixed butterfly, so every lane gets the same value and
// every run the same bits), the attention-dropout mask of kernels/detail/attention_mask.hpp on the
// device (one Philox draw serves an entry's block of heads), and the sums over a row's entries of
// a coefficient times a gathered row: the lanes leave the coefficients of a chunk of 32 entries
// (one entry a lane) in shared memory, then walk the chunk in CSR order, each lane owning columns
// 32 apart of the block's heads together.
// Device code only (and the host's making of the mask), which tests/support/cuda_emulator.hpp
// also compiles for the CPU.
#pragma once

#include <cstdint>

#include "kernels/attention.hpp"
#include "kernels/cuda/launch_shape.hpp"
#include "kernels/detail/attention_mask.hpp"
#include "kernels/device_index.hpp"
#include "kernels/dropout.hpp"

namespace halo::kernels::cuda {

constexpr unsigned int all_lanes = 0xffffffffu;
constexpr int head_block = 8;                     // heads per pass over a row: one block of the dropout mask
constexpr int chunk_entries = 32;                 // entries whose coefficients sit in shared memory at once
constexpr int column_blocks = 4;                  // 32-column blocks a lane sums at once
constexpr int pass_columns = 32 * column_blocks;  // columns a warp sums at once
constexpr int warps_per_block = threads_per_block / 32;
static_assert(threads_per_block % 32 == 0, "whole warps per block");

__device__ inline float warp_max(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(all_lanes, x, offset));
  return x;
}

__device__ inline float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(all_lanes, x, offset);
  return x;
}

// Σ_f x[f] · y[f] over n values, in order, by one lane.
__device__ inline float lane_dot(const float* x, const float* y, std::int64_t n) {
  float s = 0.0f;
  for (std::int64_t f = 0; f < n; ++f) s += x[f] * y[f];
  return s;
}

// The heads of the block starting at head `first_head` of `heads`: at most head_block.
__device__ inline int block_heads(std::int64_t heads, std::int64_t first_head) {
  return static_cast<int>(heads - first_head < head_block ? heads - first_head : head_block);
}

// The mask of one call: keep(i, j, k) = mask · 1 / (1 - p) of head k of the edge i <- j.
struct DeviceEdgeMask {
  bool dropout;
  std::uint64_t key64;
  std::uint32_t threshold;
  float scale;
  const std::int64_t* dst_ids;  // device arrays; null: the row (column) numbers
  const std::int64_t* src_ids;

  // The draws of heads [8 · block, 8 · block + 8) of the edge i <- j: one Philox block serves
  // the eight (zeros without dropout, which keep_of never reads).
  __device__ void draws(std::int64_t i, std::int64_t j, std::int64_t block, std::uint32_t bits[4]) const {
    if (!dropout) {
      bits[0] = bits[1] = bits[2] = bits[3] = 0;
      return;
    }
    const auto gi = static_cast<std::uint64_t>(dst_ids != nullptr ? dst_ids[i] : i);
    const auto gj = static_cast<std::uint64_t>(src_ids != nullptr ? src_ids[j] : j);
    detail::attention_draws(key64, gi, gj, static_cast<std::uint64_t>(block), bits);
  }
  // keep(i, j, k) from the draws of k's block of heads.
  __device__ float keep_of(const std::uint32_t bits[4], std::int64_t k) const {
    if (!dropout) return 1.0f;
    return detail::attention_kept(bits, k, threshold) ? scale : 0.0f;
  }
  // The same draws as a mask of the kept heads of the block (bit t for its head t; all without
  // dropout), for loops over heads that are not unrolled: a bit is picked without indexing an
  // array, so nothing moves to local memory.
  __device__ unsigned int kept_heads(std::int64_t i, std::int64_t j, std::int64_t block) const {
    if (!dropout) return (1u << head_block) - 1;
    std::uint32_t bits[4];
    draws(i, j, block, bits);
    unsigned int kept = 0;
#pragma unroll
    for (int t = 0; t < head_block; ++t)
      if (detail::attention_kept(bits, t, threshold)) kept |= 1u << t;
    return kept;
  }
  // keep of head t of a block from its kept_heads (1 without dropout, the scale being 1).
  __device__ float keep_bit(unsigned int kept, int t) const { return (kept >> t) & 1u ? scale : 0.0f; }
};

// The mask of rate p and `key`, keyed on the ids dst_ids and src_ids (arrays the kernels read; null:
// the row and column numbers).
inline DeviceEdgeMask device_edge_mask(float p, const DropoutKey& key, const std::int64_t* dst_ids,
                                       const std::int64_t* src_ids) {
  return {p > 0.0f, detail::attention_key64(key), detail::attention_threshold(p), dropout_scale(p), dst_ids, src_ids};
}

inline DeviceEdgeMask device_edge_mask(float p, const DropoutKey& key, AttentionIds ids) {
  return device_edge_mask(p, key, ids.dst != nullptr && ids.dst->size() > 0 ? ids.dst->device_entries() : nullptr,
                          ids.src != nullptr && ids.src->size() > 0 ? ids.src->device_entries() : nullptr);
}

// One warp's shared memory: `Rows` rows of coefficients (a row per head of the block, or more
// where an entry has several coefficients a head) of a chunk of entries, and the chunk's other
// ends (sources in forward, destinations in backward's second pass). A row is one float longer
// than the chunk, so that lanes reading one entry's coefficients of different rows meet different
// banks.
template <int Rows>
struct ChunkCoefficients {
  float weight[Rows][chunk_entries + 1];
  std::int64_t other[chunk_entries];
};

// The columns of a pass: lane `lane`'s column r of the pass over columns [begin, end) of a block
// of heads of `width` columns each (-1 past the end), and the row of its coefficients in the
// chunk: its head within the block, plus `first_row`.
struct PassColumns {
  int column[column_blocks];
  int head[column_blocks];
  __device__ PassColumns(int begin, int end, int width, int lane, int first_row = 0) {
#pragma unroll
    for (int r = 0; r < column_blocks; ++r) {
      const int q = begin + 32 * r + lane;
      column[r] = q < end ? q : -1;
      head[r] = q < end ? first_row + q / width : 0;
    }
  }
};

// The heads whose columns a pass over columns [begin, end) of a block of heads `width` columns
// each reads: [first, last), where PassColumns puts its lanes' heads (a head wider than a pass, or
// straddling two, is in each of them).
struct PassHeads {
  int first;
  int last;
  __device__ PassHeads(int begin, int end, int width)
      : first(begin / width), last(((end - begin < pass_columns ? end : begin + pass_columns) - 1) / width + 1) {}
  __device__ PassHeads(int first_head, int last_head) : first(first_head), last(last_head) {}
  __device__ bool has(int head) const { return head >= first && head < last; }
};

// acc[r] += Σ over the chunk's n entries, in order, of weight[head][x] · rows[other[x]][column].
// A zero weight (an entry's head that attention dropout dropped) adds an exact zero for finite
// rows, so its term is left out and its lanes do not read the row: under dropout p, only 1 - p of
// the gathered bytes are read, and the sums are the same.
template <int Rows>
__device__ void add_chunk(const ChunkCoefficients<Rows>& chunk, int n, const float* rows, std::int64_t stride,
                          std::int64_t offset, const PassColumns& pass, float (&acc)[column_blocks]) {
  for (int x = 0; x < n; ++x) {
    const float* row = rows + chunk.other[x] * stride + offset;
#pragma unroll
    for (int r = 0; r < column_blocks; ++r) {
      const float weight = chunk.weight[pass.head[r]][x];
      if (pass.column[r] >= 0 && weight != 0.0f) acc[r] += weight * row[pass.column[r]];
    }
  }
}

// The row's entries [first, last) in CSR order, 32 a chunk: every lane calls fill(has, other),
// `has` whether the chunk has an entry `lane` and `other` its other end (0 if not), which leaves
// that entry's coefficients in chunk.weight[...][lane] (fill is called by the whole warp, so it
// may use the warp's shuffles); then add(n) sums the chunk's n entries.
template <class I, int Rows, class Fill, class Add>
__device__ void for_chunks(const I* indices, std::int64_t first, std::int64_t last, int lane,
                           ChunkCoefficients<Rows>& chunk, const Fill& fill, const Add& add) {
  for (std::int64_t c0 = first; c0 < last; c0 += chunk_entries) {
    const int n = static_cast<int>(last - c0 < chunk_entries ? last - c0 : chunk_entries);
    const bool has = lane < n;
    const std::int64_t other = has ? static_cast<std::int64_t>(indices[c0 + lane]) : 0;
    if (has) chunk.other[lane] = other;
    fill(has, other);
    __syncwarp();
    add(n);
    __syncwarp();
  }
}

// acc[r] += Σ over the row's entries [first, last), in CSR order, of each entry's coefficient for
// the column's head times the column of the entry's other end's row in `rows` (offset by `offset`
// columns): for_chunks, lane l calling fill(other end) for the chunk's entry l only.
template <class I, int Rows, class Fill>
__device__ void sum_by_chunks(const I* indices, std::int64_t first, std::int64_t last, int lane,
                              ChunkCoefficients<Rows>& chunk, const float* rows, std::int64_t stride,
                              std::int64_t offset, const PassColumns& pass, float (&acc)[column_blocks],
                              const Fill& fill) {
  for_chunks(
      indices, first, last, lane, chunk,
      [&](bool has, std::int64_t other) {
        if (has) fill(other);
      },
      [&](int n) { add_chunk(chunk, n, rows, stride, offset, pass, acc); });
}

}  // namespace halo::kernels::cuda
