// halo's CUDA SpMM kernels, launched by kernels/cuda/spmm.cu.
//
// Each output row belongs to a group of G lanes of a warp (G a power of two chosen
// from the width so the group covers a tile of the row in one pass: 2 x VEC columns per lane).
// The group reads G nonzeros at a time (column ids and weights, coalesced), broadcasts them with
// warp shuffles, and every lane gathers its columns of the neighbour's row of x, 16 bytes at a
// time (float4) when the width, strides and alignment allow, else 4. Weights are fused into the
// accumulation, which is fp32 in CSR order. Rows longer than long_row_chunk_entries are not done by
// one group: their nonzeros are cut into chunks (precomputed by DeviceCsr), each chunk summed by
// its own group into a partial row, and the partials added in chunk order by a third kernel
// (AddChunks, chunk_sums.cuh), so a vertex of degree 10^5 does not hold one warp while the rest of
// the GPU idles. Every output value is a fixed sequence of operations: the result is deterministic.
//
// Device code only (and the host's choice of group and tile), which tests/kernels/
// emulated_spmm_test.cpp also runs on the CPU (tests/support/cuda_emulator.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cuda/chunk_sums.cuh"
#include "kernels/cuda/device_csr.hpp"

namespace halo::kernels::cuda::spmm_kernels {

// Lanes per row for a product of `width` columns: the smallest power of two up to 32 whose lanes
// cover the width in one pass of 2 x VEC columns each (VEC = 4 with 16-byte loads, else 1).
inline int group_size(std::int64_t width, bool vec4) {
  const int per_lane = vec4 ? 8 : 2;
  int group = 1;
  while (group < 32 && static_cast<std::int64_t>(group) * per_lane < width) group *= 2;
  return group;
}

// The column tiles (blockIdx.y) of a product of `width` columns: a group's lanes take 2 x VEC
// columns each.
inline std::int64_t column_tiles(std::int64_t width, int group, int vec) {
  const std::int64_t tile = static_cast<std::int64_t>(group) * vec * 2;
  return (width + tile - 1) / tile;
}

// The blocks (blockIdx.x) of `threads` threads that hold `groups` groups of `group` lanes.
inline std::int64_t group_blocks(std::int64_t groups, int group, int threads) {
  const std::int64_t per_block = threads / group;
  return (groups + per_block - 1) / per_block;
}

template <class I>
struct SpmmArgs {
  const std::int64_t* indptr;
  const I* indices;
  const float* weights;  // nullptr: all ones
  const float* x;
  std::int64_t x_stride;
  std::int64_t width;
  int group;  // lanes per row: 1, 2, 4, 8, 16 or 32
};

template <int VEC>
struct Vec;
template <>
struct Vec<1> {
  __device__ static void load(const float* p, float* v) { v[0] = __ldg(p); }
  __device__ static void store(float* p, const float* v) { p[0] = v[0]; }
  __device__ static void add_to(float* p, const float* v) { p[0] += v[0]; }
};
template <>
struct Vec<4> {
  __device__ static void load(const float* p, float* v) {
    const float4 q = __ldg(reinterpret_cast<const float4*>(p));
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
  }
  __device__ static void store(float* p, const float* v) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  }
  __device__ static void add_to(float* p, const float* v) {
    float4 q = *reinterpret_cast<float4*>(p);
    q.x += v[0];
    q.y += v[1];
    q.z += v[2];
    q.w += v[3];
    *reinterpret_cast<float4*>(p) = q;
  }
};

// The lane's place in its group and the columns it owns in this block's column tile.
struct GroupLane {
  int lane_in_group;
  int first_lane;      // warp lane of the group's lane 0
  unsigned int mask;   // the group's lanes
  std::int64_t group;  // global group index
  std::int64_t col0, col1;
};

template <int VEC>
__device__ GroupLane group_lane(int group_size) {
  GroupLane g;
  const int lane = static_cast<int>(threadIdx.x % 32);
  g.lane_in_group = lane & (group_size - 1);
  g.first_lane = lane - g.lane_in_group;
  g.mask = group_size == 32 ? 0xffffffffu : ((1u << group_size) - 1u) << g.first_lane;
  g.group = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / group_size;
  const std::int64_t tile = static_cast<std::int64_t>(blockIdx.y) * group_size * VEC * 2;
  g.col0 = tile + static_cast<std::int64_t>(g.lane_in_group) * VEC;
  g.col1 = tile + static_cast<std::int64_t>(group_size + g.lane_in_group) * VEC;
  return g;
}

// acc += Σ_{e in [begin, end)} w_e · x[indices[e], this lane's columns], in order of e.
template <class I, int VEC>
__device__ void accumulate_edges(const SpmmArgs<I>& p, const GroupLane& g, std::int64_t begin, std::int64_t end,
                                 float (&acc)[2 * VEC]) {
  const bool has0 = g.col0 < p.width;
  const bool has1 = g.col1 < p.width;
  for (std::int64_t base = begin; base < end; base += p.group) {
    const std::int64_t e = base + g.lane_in_group;
    I my_col = 0;
    float my_weight = 0.0f;
    if (e < end) {
      my_col = p.indices[e];
      my_weight = p.weights != nullptr ? p.weights[e] : 1.0f;
    }
    const int count = end - base < p.group ? static_cast<int>(end - base) : p.group;
#pragma unroll 4
    for (int t = 0; t < count; ++t) {
      const I col = __shfl_sync(g.mask, my_col, g.first_lane + t);
      const float w = __shfl_sync(g.mask, my_weight, g.first_lane + t);
      const float* row = p.x + static_cast<std::int64_t>(col) * p.x_stride;
      float v[VEC];
      if (has0) {
        Vec<VEC>::load(row + g.col0, v);
#pragma unroll
        for (int q = 0; q < VEC; ++q) acc[q] = fmaf(w, v[q], acc[q]);
      }
      if (has1) {
        Vec<VEC>::load(row + g.col1, v);
#pragma unroll
        for (int q = 0; q < VEC; ++q) acc[VEC + q] = fmaf(w, v[q], acc[VEC + q]);
      }
    }
  }
}

// Rows of at most long_row_chunk_entries nonzeros: out[r] (+)= Σ w · x[col].
template <class I, int VEC>
__global__ void spmm_rows_kernel(SpmmArgs<I> p, std::int64_t rows, float* out, std::int64_t out_stride,
                                 bool accumulate) {
  const GroupLane g = group_lane<VEC>(p.group);
  if (g.group >= rows) return;
  const std::int64_t begin = p.indptr[g.group];
  const std::int64_t end = p.indptr[g.group + 1];
  if (end - begin > long_row_chunk_entries) return;  // a long row: its chunks and the combine kernel write it
  // Adding nothing leaves the row as it is, unread and unwritten, as on the CPU: no traffic, no
  // write for a reader on another stream to race with, and no -0 turned into +0 by out + 0.
  if (accumulate && begin == end) return;
  float acc[2 * VEC] = {};
  accumulate_edges<I, VEC>(p, g, begin, end, acc);
  float* o = out + g.group * out_stride;
  if (g.col0 < p.width) accumulate ? Vec<VEC>::add_to(o + g.col0, acc) : Vec<VEC>::store(o + g.col0, acc);
  if (g.col1 < p.width) accumulate ? Vec<VEC>::add_to(o + g.col1, acc + VEC) : Vec<VEC>::store(o + g.col1, acc + VEC);
}

// partial[u] = the sum over chunk u's nonzeros (partial has row stride `width`).
template <class I, int VEC>
__global__ void spmm_chunks_kernel(SpmmArgs<I> p, const std::int64_t* chunk_begin, const std::int64_t* chunk_end,
                                   std::int64_t chunks, float* partial) {
  const GroupLane g = group_lane<VEC>(p.group);
  if (g.group >= chunks) return;
  float acc[2 * VEC] = {};
  accumulate_edges<I, VEC>(p, g, chunk_begin[g.group], chunk_end[g.group], acc);
  float* o = partial + g.group * p.width;
  if (g.col0 < p.width) Vec<VEC>::store(o + g.col0, acc);
  if (g.col1 < p.width) Vec<VEC>::store(o + g.col1, acc + VEC);
}

}  // namespace halo::kernels::cuda::spmm_kernels
