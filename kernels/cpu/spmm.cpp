// CPU SpMM: rows are cut into ranges of about equal work (nonzeros + rows, found by binary search
// on indptr), a few ranges per thread, scheduled dynamically. One thread computes each output
// row, adding its neighbours' rows in CSR order, so the result does not depend on the threads.
// Features wider than 64 go through in dense panels of 64 columns.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "graph/base/parallel.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/row_ranges.hpp"

namespace halo::kernels::cpu {
namespace {

// Neighbours whose rows are requested ahead of use: a gathered row is a cache miss the hardware
// prefetcher cannot predict. Only the first line of the row is requested: the prefetcher follows
// the rest of a wide row once it is being read. Rows of one cache line (the width-16 loop) are
// requested twice as far ahead and into L2 only, which holds more requests in flight than L1:
// 14-16 % faster at width 16; wider rows were slower so (halo-bench spmm, 250 K vertices, 2-core
// Xeon; distances 8 to 64 with either target compared).
constexpr std::int64_t prefetch_distance = 16;
constexpr std::int64_t narrow_prefetch_distance = 32;
// Wider features are multiplied one column panel at a time, each first copied into a dense
// rows x 64 block (kernels::cpu_spmm_panel_columns): the rows gathered at random then come from a
// block a quarter the size (at width 256) that the caches keep far better than the same bytes
// spread over the wide rows, whose neighbouring lines the hardware prefetcher fetches too. The
// copy costs one pass over X. Width 128: 10-20 % faster, 256: 23 %; 64 beat 32 and 128
// (halo-bench spmm, 250 K vertices, 2-core Xeon).
constexpr std::int64_t panel_width = cpu_spmm_panel_columns;

// The loops below are written for g++ -O3 to vectorise over the feature dimension: contiguous
// rows, no aliasing (__restrict), and eight (then four) neighbours per pass over the output row,
// so each output value is loaded and stored once per eight neighbours and eight gathered rows
// are in flight at once (5-10 % faster than four at width 256 on this project's 2-core machine).
// o + w0·x0 + w1·x1 + ... is evaluated left to right, the same order as one neighbour at a time.
inline void add_4(float* __restrict o, const float* __restrict x0, const float* __restrict x1,
                  const float* __restrict x2, const float* __restrict x3, float w0, float w1, float w2, float w3,
                  std::int64_t f) {
  for (std::int64_t j = 0; j < f; ++j) o[j] = o[j] + w0 * x0[j] + w1 * x1[j] + w2 * x2[j] + w3 * x3[j];
}
inline void add_4(float* __restrict o, const float* __restrict x0, const float* __restrict x1,
                  const float* __restrict x2, const float* __restrict x3, std::int64_t f) {
  for (std::int64_t j = 0; j < f; ++j) o[j] = o[j] + x0[j] + x1[j] + x2[j] + x3[j];
}
inline void add_8(float* __restrict o, const float* const* __restrict x, const float* __restrict w, std::int64_t f) {
  for (std::int64_t j = 0; j < f; ++j)
    o[j] = o[j] + w[0] * x[0][j] + w[1] * x[1][j] + w[2] * x[2][j] + w[3] * x[3][j] + w[4] * x[4][j] +
           w[5] * x[5][j] + w[6] * x[6][j] + w[7] * x[7][j];
}
inline void add_8(float* __restrict o, const float* const* __restrict x, std::int64_t f) {
  for (std::int64_t j = 0; j < f; ++j)
    o[j] = o[j] + x[0][j] + x[1][j] + x[2][j] + x[3][j] + x[4][j] + x[5][j] + x[6][j] + x[7][j];
}
inline void add_1(float* __restrict o, const float* __restrict x0, float w0, std::int64_t f) {
  for (std::int64_t j = 0; j < f; ++j) o[j] = o[j] + w0 * x0[j];
}
inline void add_1(float* __restrict o, const float* __restrict x0, std::int64_t f) {
  for (std::int64_t j = 0; j < f; ++j) o[j] = o[j] + x0[j];
}

// Width > 0 compiles the loops for that feature width (fully unrolled); 0 reads it from x. Width
// 16 (one AVX-512 vector, GCN's usual hidden width) is the one where the loop's own overhead
// shows: unrolled, it is about 5 % faster (halo-bench spmm, 250 K vertices, 2-core Xeon).
template <class I, bool Weighted, std::int64_t Width>
inline __attribute__((always_inline)) void spmm_rows(const graph::CsrView<I>& a, ConstTensorView x, TensorView out,
                                                     bool accumulate, std::int64_t begin, std::int64_t end) {
  const std::int64_t f = Width > 0 ? Width : x.cols;
  const I* __restrict indices = a.indices;
  const float* __restrict weights = a.weights;
  const std::int64_t num_edges = a.num_edges;
  // Compile-time constants, not a run-time choice: with a branch on the width here GCC contracted
  // the sums into fused multiply-adds differently in the two specialisations, and their results
  // must agree bit for bit (FeatureInput's column panels of Â·X against the whole product).
  constexpr std::int64_t ahead = Width == 16 ? narrow_prefetch_distance : prefetch_distance;
  constexpr int locality = Width == 16 ? 1 : 3;  // __builtin_prefetch's: 1 = into L2, 3 = into L1
  for (std::int64_t r = begin; r < end; ++r) {
    float* o = out.row(r);
    if (!accumulate) std::fill(o, o + f, 0.0f);
    std::int64_t e = a.indptr[r];
    const std::int64_t row_end = a.indptr[r + 1];
    for (; e + 8 <= row_end; e += 8) {
      for (std::int64_t k = e + ahead; k < std::min(e + ahead + 8, num_edges); ++k)
        __builtin_prefetch(x.row(indices[k]), 0, locality);
      const float* xs[8];
      for (int q = 0; q < 8; ++q) xs[q] = x.row(indices[e + q]);
      if constexpr (Weighted)
        add_8(o, xs, weights + e, f);
      else
        add_8(o, xs, f);
    }
    for (; e + 4 <= row_end; e += 4) {
      for (std::int64_t k = e + ahead; k < std::min(e + ahead + 4, num_edges); ++k)
        __builtin_prefetch(x.row(indices[k]), 0, locality);
      const float* x0 = x.row(indices[e]);
      const float* x1 = x.row(indices[e + 1]);
      const float* x2 = x.row(indices[e + 2]);
      const float* x3 = x.row(indices[e + 3]);
      if constexpr (Weighted)
        add_4(o, x0, x1, x2, x3, weights[e], weights[e + 1], weights[e + 2], weights[e + 3], f);
      else
        add_4(o, x0, x1, x2, x3, f);
    }
    for (; e < row_end; ++e) {
      if constexpr (Weighted)
        add_1(o, x.row(indices[e]), weights[e], f);
      else
        add_1(o, x.row(indices[e]), f);
    }
  }
}

// The row loop compiled for AVX-512, AVX2 and the x86-64 baseline, picked once at load time by
// the CPU it runs on (GCC's target_clones), so a portable build still uses the wide vector units.
// The clones may round differently (fused multiply-add), but one machine always runs the same one.
#define HALO_SPMM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
HALO_SPMM_CLONES void rows_i32_weighted(const graph::CsrView<std::int32_t>& a, ConstTensorView x, TensorView out,
                                        bool accumulate, std::int64_t begin, std::int64_t end) {
  if (x.cols == 16)
    spmm_rows<std::int32_t, true, 16>(a, x, out, accumulate, begin, end);
  else
    spmm_rows<std::int32_t, true, 0>(a, x, out, accumulate, begin, end);
}
HALO_SPMM_CLONES void rows_i32(const graph::CsrView<std::int32_t>& a, ConstTensorView x, TensorView out,
                               bool accumulate, std::int64_t begin, std::int64_t end) {
  if (x.cols == 16)
    spmm_rows<std::int32_t, false, 16>(a, x, out, accumulate, begin, end);
  else
    spmm_rows<std::int32_t, false, 0>(a, x, out, accumulate, begin, end);
}
HALO_SPMM_CLONES void rows_i64_weighted(const graph::CsrView<std::int64_t>& a, ConstTensorView x, TensorView out,
                                        bool accumulate, std::int64_t begin, std::int64_t end) {
  if (x.cols == 16)
    spmm_rows<std::int64_t, true, 16>(a, x, out, accumulate, begin, end);
  else
    spmm_rows<std::int64_t, true, 0>(a, x, out, accumulate, begin, end);
}
HALO_SPMM_CLONES void rows_i64(const graph::CsrView<std::int64_t>& a, ConstTensorView x, TensorView out,
                               bool accumulate, std::int64_t begin, std::int64_t end) {
  if (x.cols == 16)
    spmm_rows<std::int64_t, false, 16>(a, x, out, accumulate, begin, end);
  else
    spmm_rows<std::int64_t, false, 0>(a, x, out, accumulate, begin, end);
}
#undef HALO_SPMM_CLONES

void spmm_row_range(const graph::CsrView<std::int32_t>& a, ConstTensorView x, TensorView out, bool accumulate,
                    std::int64_t begin, std::int64_t end) {
  if (a.weights != nullptr)
    rows_i32_weighted(a, x, out, accumulate, begin, end);
  else
    rows_i32(a, x, out, accumulate, begin, end);
}
void spmm_row_range(const graph::CsrView<std::int64_t>& a, ConstTensorView x, TensorView out, bool accumulate,
                    std::int64_t begin, std::int64_t end) {
  if (a.weights != nullptr)
    rows_i64_weighted(a, x, out, accumulate, begin, end);
  else
    rows_i64(a, x, out, accumulate, begin, end);
}

template <class I>
void spmm_impl(const graph::CsrView<I>& a, ConstTensorView x, TensorView out, Accumulate mode) {
  if (a.num_rows == 0 || x.cols == 0) return;
  const bool accumulate = mode == Accumulate::add;
  const std::int64_t ranges = std::min<std::int64_t>(a.num_rows, ranges_per_thread * max_threads());
  const std::vector<std::int64_t> bounds = balanced_row_ranges(a, ranges);
  const auto multiply = [&](ConstTensorView xs, TensorView os) {
    parallel_for(
        0, ranges,
        [&](std::int64_t k) {
          const std::int64_t begin = bounds[static_cast<std::size_t>(k)];
          const std::int64_t end = bounds[static_cast<std::size_t>(k) + 1];
          spmm_row_range(a, xs, os, accumulate, begin, end);
        },
        1);
  };
  if (x.cols <= panel_width) {
    multiply(x, out);
    return;
  }
  // One panel of X at a time, copied into a dense rows x panel_width block; each output value
  // is still the same sum in the same order, so the result is bit for bit the unpanelled one.
  const std::unique_ptr<float, void (*)(float*)> panel(
      static_cast<float*>(allocate(static_cast<std::size_t>(cpu_spmm_workspace_bytes(x.rows, x.cols)))),
      [](float* p) { release(p); });
  for (std::int64_t c0 = 0; c0 < x.cols; c0 += panel_width) {
    const std::int64_t width = std::min(panel_width, x.cols - c0);
    const TensorView dense{panel.get(), x.rows, width, width, x.device};
    cpu::copy(ConstTensorView{x.data + c0, x.rows, width, x.stride, x.device}, dense);
    multiply(dense, TensorView{out.data + c0, out.rows, width, out.stride, out.device});
  }
}

}  // namespace

void spmm(const graph::CsrView<std::int32_t>& a, ConstTensorView x, TensorView out, Accumulate mode) {
  spmm_impl(a, x, out, mode);
}
void spmm(const graph::CsrView<std::int64_t>& a, ConstTensorView x, TensorView out, Accumulate mode) {
  spmm_impl(a, x, out, mode);
}

}  // namespace halo::kernels::cpu
