// CUDA scaled dot-product attention, twin of kernels/cpu/dot_attention.cpp, on the building blocks
// of GAT's kernels (attention_warp.cuh): one warp per row (a destination in forward and backward's
// first pass, a source of Aᵀ in its second), or per chunk of a long row (attention_chunks.cuh),
// its heads in blocks of head_block (one Philox draw of the dropout mask serves an entry's block). HGT's heads are
// narrow (Fk, Fv of 8 to 64), so a lane takes a whole entry: its scores q_i · k_j (a serial dot over Fk on the lane),
// exponentials, mask and dots g_i · v_j, leaving the entry's coefficients in shared memory for the chunk of 32 entries;
// then the lanes sum the chunk's gathered rows times the coefficients in CSR order, each lane owning columns 32 apart
// of the pass's heads together (8 heads of 8 columns keep every lane busy).
//
// Passes: a pass over a row takes as many whole heads of the block as fit in pass_columns columns
// of the widest output it sums (a piece of one head where a head is wider), and computes the
// coefficients of its own heads only: a score is computed once per pass that needs it, once in
// all unless a head is wider than pass_columns.
// Forward keeps the softmax online: at each chunk a head's running maximum rises to the chunk's
// (warp_max), and the lanes' partial sums and the column sums so far are scaled by exp(old - new)
// (exactly 1 while the maximum stays); the lanes' sums meet in a butterfly at the end. Backward's
// first pass sums c = Σ_j α · dα per head (lanes over entries) before its chunks, which recompute
// α and dα only where the row has more than 32 entries (else each lane's are still in its slots).
// Its second pass computes both coefficients of an entry (α · (dα - c_i) for grad_keys, α · keep
// for grad_values) at once, in two rows of the chunk per head.
//
// The loops over a pass's heads are not unrolled, and what a lane keeps per head (running maximum
// and sum, α, dα, c) sits in its own column of further rows of shared memory (WarpRows): unrolled,
// with that state in registers, the eight copies of the lane-serial dots made both backward
// kernels spill (ptxas: 240 to 424 bytes of spill stores a thread) and every kernel three to five
// times larger. The kept heads of an entry are a bit mask (DeviceEdgeMask::kept_heads) for the
// same reason: the draws indexed by a head known only at run time would live in local memory.
//
// Cost per entry and head (Fk = Fv = d, 4-byte floats): forward gathers k_j and v_j (8 d bytes),
// does 2 d multiply-adds and two exponentials (the entry's and its lane's share of the rise);
// backward's first pass gathers k_j and v_j (8 d bytes; the chunks read k_j again, from cache),
// does 3 d multiply-adds and one exponential (5 d and two in rows of more than 32 entries); its
// second gathers q_i and g_i (8 d bytes, again from cache for the sums) plus the destination's
// maximum, sum and c (12 bytes), and does 4 d multiply-adds and one exponential. Shared memory per
// warp: 3.3 KB (forward, first pass), 2.3 KB (second pass).
//
// The kernels are launched with __launch_bounds__(threads_per_block, 2): at most 128 registers a
// thread (ptxas: no spills at sm_80 and sm_90), so two blocks, 16 warps, share each SM. No atomics:
// every output is written by one warp in a fixed order (a row's sums in CSR order, per-head sums
// over lanes in a fixed butterfly), so results are the same on every run (they differ from the
// CPU's by rounding: the sums are ordered differently).
//
// Device code only: kernels/cuda/dot_attention.cu launches it, and tests/kernels/
// emulated_attention_test.cpp runs the same code on the CPU (tests/support/cuda_emulator.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cuda/attention_chunks.cuh"
#include "kernels/cuda/attention_warp.cuh"

namespace halo::kernels::cuda::dot_kernels {

struct Operands {
  const float* q;
  std::int64_t q_stride;
  const float* k;
  std::int64_t k_stride;
  const float* v;
  std::int64_t v_stride;
  std::int64_t heads;
  int key_width;    // Fk
  int value_width;  // Fv
  DeviceEdgeMask mask;

  // q_i · k_j of head h, by one lane.
  __device__ float score(std::int64_t i, std::int64_t j, std::int64_t h) const {
    return lane_dot(q + i * q_stride + h * key_width, k + j * k_stride + h * key_width, key_width);
  }
  // g_i · v_j of head h (g: the output's gradient), by one lane.
  __device__ float value_dot(const float* g, std::int64_t g_stride, std::int64_t i, std::int64_t j,
                             std::int64_t h) const {
    return lane_dot(g + i * g_stride + h * value_width, v + j * v_stride + h * value_width, value_width);
  }
};

// One pass over a row: heads [first, end) of the block, and `piece`, which pass_columns-wide piece
// of their columns (0 unless a head is wider).
struct HeadPass {
  int first;
  int end;
  int piece;

  // The pass's columns of an output of `width` columns a head: [begin, end) of the block's.
  __device__ int column_begin(int width) const { return first * width + piece * pass_columns; }
  __device__ int column_end(int width) const {
    const int begin = column_begin(width);
    return end * width < begin + pass_columns ? end * width : begin + pass_columns;
  }
  __device__ PassColumns columns(int width, int lane, int first_row = 0) const {
    return PassColumns(column_begin(width), column_end(width), width, lane, first_row);
  }
};

// pass(HeadPass) over the `heads` heads of a block for outputs at most `widest` columns a head:
// whole heads, as many as fit in pass_columns columns, or each head in pieces of pass_columns.
template <class Pass>
__device__ void for_head_passes(int heads, int widest, const Pass& pass) {
  const int per_pass = widest == 0 ? heads : widest >= pass_columns ? 1 : pass_columns / widest;
  const int pieces = widest <= pass_columns ? 1 : (widest + pass_columns - 1) / pass_columns;
  for (int h = 0; h < heads; h += per_pass)
    for (int piece = 0; piece < pieces; ++piece) pass(HeadPass{h, h + per_pass < heads ? h + per_pass : heads, piece});
}

// The shared memory of a warp of the kernels below: a chunk's coefficients in rows [0, head_block),
// head t's in row t, and further rows of head_block, row t of each a per-lane slot of head t
// (lane l's in column l, which no other lane touches).
template <int Sets>
using WarpRows = ChunkCoefficients<Sets * head_block>;

template <class I>
__global__ void __launch_bounds__(threads_per_block, 2)
    forward_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, RowChunks chunks, Operands o,
                   SoftmaxOutputs outputs) {
  // Rows of the slots: head t's running maximum (the same on every lane), then the lane's sum of
  // exp(e - maximum) and, once the chunks are done, the row's.
  constexpr int top_row = head_block, sum_row = 2 * head_block;
  __shared__ WarpRows<3> shared[warps_per_block];
  WarpRows<3>& chunk = shared[threadIdx.x / 32];
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int width = o.value_width;
  for_work_items(indptr, rows, chunks, false, [&](WorkItem item) {
    const std::int64_t i = item.row, first = item.first, last = item.last;
    for (std::int64_t k0 = 0; k0 < o.heads; k0 += head_block) {
      for_head_passes(block_heads(o.heads, k0), width, [&](const HeadPass& heads) {
        const PassColumns pass = heads.columns(width, lane);
        float acc[column_blocks] = {};
#pragma unroll 1
        for (int t = heads.first; t < heads.end; ++t) {
          chunk.weight[top_row + t][lane] = -INFINITY;
          chunk.weight[sum_row + t][lane] = 0.0f;
        }
        for_chunks(
            indices, first, last, lane, chunk,
            [&](bool has, std::int64_t j) {
              const unsigned int kept = has ? o.mask.kept_heads(i, j, k0 / head_block) : 0u;
#pragma unroll 1
              for (int t = heads.first; t < heads.end; ++t) {
                // The maximum rises to the chunk's; the sums so far scale by exp(old - new).
                const float e = has ? o.score(i, j, k0 + t) : -INFINITY;
                const float old = chunk.weight[top_row + t][lane];
                const float top = fmaxf(old, warp_max(e));
                const float rise = expf(old - top);  // 0 at the first chunk, 1 while the maximum stays
                const float w = has ? expf(e - top) : 0.0f;
                chunk.weight[top_row + t][lane] = top;
                chunk.weight[sum_row + t][lane] = chunk.weight[sum_row + t][lane] * rise + w;
                if (has) chunk.weight[t][lane] = w * o.mask.keep_bit(kept, t);
#pragma unroll
                for (int r = 0; r < column_blocks; ++r)
                  if (pass.head[r] == t) acc[r] *= rise;
              }
            },
            [&](int n) { add_chunk(chunk, n, o.v, o.v_stride, k0 * width, pass, acc); });
#pragma unroll 1
        for (int t = heads.first; t < heads.end; ++t) {
          const float total = warp_sum(chunk.weight[sum_row + t][lane]);
          chunk.weight[sum_row + t][lane] = total;
          if (lane == 0 && heads.piece == 0) outputs.stats(item, k0 + t, chunk.weight[top_row + t][lane], total);
        }
        // out: the column sums over the sum of the exponentials (zeros for a row without entries).
#pragma unroll
        for (int r = 0; r < column_blocks; ++r)
          if (pass.column[r] >= 0)
            outputs.column(item, k0 * width + pass.column[r], acc[r], chunk.weight[sum_row + pass.head[r]][lane]);
      });
    }
  });
}

// Backward's first pass, a warp per work item of destination rows i: c = Σ_j α · dα (lanes over
// the entries, then across the warp) into `c`, and grad_query_i = Σ_j α · (dα - c) · k_j (by
// chunks) into `grad_query`. The sums of grad_query need a long row's whole c, so its chunks take
// two launches: the first (second_launch false) does the whole rows and the chunks' parts of c,
// which AddChunks adds up; the second, the chunks only, sums their parts of grad_query with it.
template <class I>
__global__ void __launch_bounds__(threads_per_block, 2)
    dst_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, RowChunks chunks, bool second_launch,
               Operands o, const float* row_max, std::int64_t max_stride, const float* row_sum, std::int64_t sum_stride,
               const float* grad_out, std::int64_t grad_stride, RowSums grad_query, RowSums c) {
  // Rows of the slots: dα of the lane's entry, then the lane's part of c and, once summed, c. Row t
  // holds α of the lane's entry until it becomes the coefficient α · (dα - c).
  constexpr int dalpha_row = head_block, c_row = 2 * head_block;
  __shared__ WarpRows<3> shared[warps_per_block];
  WarpRows<3>& chunk = shared[threadIdx.x / 32];
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int width = o.key_width;
  for_work_items(indptr, rows, chunks, second_launch, [&](WorkItem item) {
    const std::int64_t i = item.row, first = item.first, last = item.last;
    const bool sums_c = !second_launch, sums_grad_query = second_launch || item.whole();
    // A lane's entries in the sums of c are those it takes in the chunks: with one chunk, its
    // entry's α and dα are still in the slots there.
    const bool one_chunk = sums_c && last - first <= chunk_entries;
    for (std::int64_t k0 = 0; k0 < o.heads; k0 += head_block) {
      for_head_passes(block_heads(o.heads, k0), width, [&](const HeadPass& heads) {
        // α and dα of the pass's heads of the entry i <- j into the lane's slots.
        const auto coefficients = [&](std::int64_t j) {
          const unsigned int kept = o.mask.kept_heads(i, j, k0 / head_block);
#pragma unroll 1
          for (int t = heads.first; t < heads.end; ++t) {
            const std::int64_t k = k0 + t;
            const float total = row_sum[i * sum_stride + k];
            chunk.weight[t][lane] =
                expf(o.score(i, j, k) - row_max[i * max_stride + k]) * (total > 0.0f ? 1.0f / total : 0.0f);
            const float keep = o.mask.keep_bit(kept, t);
            chunk.weight[dalpha_row + t][lane] =
                keep != 0.0f ? o.value_dot(grad_out, grad_stride, i, j, k) * keep : 0.0f;  // v_j unread if dropped
          }
        };
        if (sums_c) {
#pragma unroll 1
          for (int t = heads.first; t < heads.end; ++t) chunk.weight[c_row + t][lane] = 0.0f;
          for (std::int64_t e = first + lane; e < last; e += 32) {
            coefficients(static_cast<std::int64_t>(indices[e]));
#pragma unroll 1
            for (int t = heads.first; t < heads.end; ++t)
              chunk.weight[c_row + t][lane] += chunk.weight[t][lane] * chunk.weight[dalpha_row + t][lane];
          }
#pragma unroll 1
          for (int t = heads.first; t < heads.end; ++t) {
            const float total = warp_sum(chunk.weight[c_row + t][lane]);
            chunk.weight[c_row + t][lane] = total;
            if (lane == 0 && heads.piece == 0) c.put_first(item, k0 + t, total);
          }
        } else {
#pragma unroll 1
          for (int t = heads.first; t < heads.end; ++t)
            chunk.weight[c_row + t][lane] = c.first.data[i * c.first.stride + k0 + t];
        }
        if (!sums_grad_query) return;
        const PassColumns pass = heads.columns(width, lane);
        float acc[column_blocks] = {};
        sum_by_chunks(indices, first, last, lane, chunk, o.k, o.k_stride, k0 * width, pass, acc, [&](std::int64_t j) {
          if (!one_chunk) coefficients(j);
#pragma unroll 1
          for (int t = heads.first; t < heads.end; ++t)
            chunk.weight[t][lane] *= chunk.weight[dalpha_row + t][lane] - chunk.weight[c_row + t][lane];
        });
#pragma unroll
        for (int r = 0; r < column_blocks; ++r)
          if (pass.column[r] >= 0) grad_query.put_first(item, k0 * width + pass.column[r], acc[r]);
      });
    }
  });
}

// Backward's second pass, a warp per work item of source rows j of Aᵀ: grad_keys_j = Σ_i α · (dα - c_i) · q_i
// and grad_values_j = Σ_i α · keep · g_i, in CSR order, a chunk of coefficients at a time: head t's
// key coefficients in the chunk's row t, its value coefficients in row head_block + t. grad_keys
// goes to `sums`' first output, grad_values to its second.
template <class I>
__global__ void __launch_bounds__(threads_per_block, 2)
    src_kernel(const std::int64_t* indptr, const I* indices, std::int64_t rows, RowChunks chunks, Operands o,
               const float* row_max, std::int64_t max_stride, const float* row_sum, std::int64_t sum_stride,
               const float* grad_out, std::int64_t grad_stride, const float* c, std::int64_t c_stride, RowSums sums) {
  __shared__ WarpRows<2> shared[warps_per_block];
  WarpRows<2>& chunk = shared[threadIdx.x / 32];
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int fk = o.key_width, fv = o.value_width;
  for_work_items(indptr, rows, chunks, false, [&](WorkItem item) {
    const std::int64_t j = item.row, first = item.first, last = item.last;
    for (std::int64_t k0 = 0; k0 < o.heads; k0 += head_block) {
      for_head_passes(block_heads(o.heads, k0), fk > fv ? fk : fv, [&](const HeadPass& heads) {
        const PassColumns keys = heads.columns(fk, lane), values = heads.columns(fv, lane, head_block);
        // A piece past the keys' columns needs no dα.
        const bool any_keys = heads.column_begin(fk) < heads.column_end(fk);
        float key_acc[column_blocks] = {}, value_acc[column_blocks] = {};
        for_chunks(
            indices, first, last, lane, chunk,
            [&](bool has, std::int64_t i) {
              if (!has) return;
              const unsigned int kept = o.mask.kept_heads(i, j, k0 / head_block);
#pragma unroll 1
              for (int t = heads.first; t < heads.end; ++t) {
                const std::int64_t k = k0 + t;
                const float alpha =
                    expf(o.score(i, j, k) - row_max[i * max_stride + k]) * (1.0f / row_sum[i * sum_stride + k]);
                const float keep = o.mask.keep_bit(kept, t);
                chunk.weight[head_block + t][lane] = alpha * keep;
                if (any_keys) {
                  // g_i is not read for a dropped entry.
                  const float dalpha = keep != 0.0f ? o.value_dot(grad_out, grad_stride, i, j, k) * keep : 0.0f;
                  chunk.weight[t][lane] = alpha * (dalpha - c[i * c_stride + k]);
                }
              }
            },
            [&](int n) {
              add_chunk(chunk, n, o.q, o.q_stride, k0 * fk, keys, key_acc);
              add_chunk(chunk, n, grad_out, grad_stride, k0 * fv, values, value_acc);
            });
#pragma unroll
        for (int r = 0; r < column_blocks; ++r) {
          if (keys.column[r] >= 0) sums.put_first(item, k0 * fk + keys.column[r], key_acc[r]);
          if (values.column[r] >= 0) sums.put_second(item, k0 * fv + values.column[r], value_acc[r]);
        }
      });
    }
  });
}

}  // namespace halo::kernels::cuda::dot_kernels
