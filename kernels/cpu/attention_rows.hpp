// The row machinery shared by the CPU's attention kernels (kernels/cpu/attention.cpp for GAT's
// additive scores, kernels/cpu/dot_attention.cpp for scaled dot-product scores): a row's
// per-entry work is split into flat passes that vectorise — its scores for every entry and head
// into a scratch row, exp over all of them at once (vector_exp), the dropout mask's Philox blocks
// mask_batch at a time — then one sweep over the entries gathers their rows, each requested
// gather_ahead entries before its use. Row ranges of about equal work, each row by one thread in
// CSR order, so results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "graph/base/parallel.hpp"
#include "graph/base/random.hpp"
#include "graph/csr.hpp"
#include "kernels/attention.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/row_ranges.hpp"
#include "kernels/cpu/vector_exp.hpp"
#include "kernels/detail/attention_mask.hpp"
#include "kernels/dropout.hpp"

namespace halo::kernels::cpu::attention_rows {

// Entries ahead of the one being summed whose gathered rows are requested: a gathered row is a
// cache miss the hardware prefetcher cannot predict.
constexpr std::int64_t gather_ahead = 8;
// Philox blocks drawn together in one vectorised loop (as kernels/cpu/dropout.cpp): at most
// mask_batch, a row's fewer slots rounded up to 8 (one vector of 64-bit lanes).
constexpr int mask_batch = 32;
// edge_keep reads a block's 16-bit draws as the halves of its words laid out in memory.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "edge_keep assumes a little-endian machine");

// The attention-dropout mask of kernels/detail/attention_mask.hpp for one call.
struct EdgeMask {
  bool dropout;
  std::uint64_t key64;
  std::uint32_t threshold;
  float scale;
  const std::int64_t* dst_ids;  // null: the row numbers
  const std::int64_t* src_ids;  // null: the column numbers

  EdgeMask(float p, const DropoutKey& key, AttentionIds ids)
      : dropout(p > 0.0f),
        key64(detail::attention_key64(key)),
        threshold(detail::attention_threshold(p)),
        scale(dropout_scale(p)),
        dst_ids(ids.dst != nullptr && ids.dst->size() > 0 ? ids.dst->host().data : nullptr),
        src_ids(ids.src != nullptr && ids.src->size() > 0 ? ids.src->host().data : nullptr) {}

  std::uint64_t dst_id(std::int64_t i) const { return static_cast<std::uint64_t>(dst_ids != nullptr ? dst_ids[i] : i); }
  std::uint64_t src_id(std::int64_t j) const { return static_cast<std::uint64_t>(src_ids != nullptr ? src_ids[j] : j); }
};

// keep[t · H + k] = mask · 1 / (1 - p) of head k of the edge dst_of(t) <- src_of(t) for t < n (1
// without dropout). Slot s = t · blocks + b draws the heads of block b of entry t (one Philox
// block), mask_batch slots at a time in flat passes: their counters (stepping (t, b) along, no
// division), the draws, then the keeps. The stores into keep go through locals (threshold,
// scale), which they could otherwise alias.
template <class DstOf, class SrcOf>
inline __attribute__((always_inline)) void edge_keep(const EdgeMask& mask, std::int64_t heads, std::int64_t n,
                                                     DstOf dst_of, SrcOf src_of, float* __restrict keep) {
  if (!mask.dropout) {
    std::fill(keep, keep + n * heads, 1.0f);
    return;
  }
  const std::int64_t blocks = (heads + 7) / 8, slots = n * blocks;
  const std::uint32_t threshold = mask.threshold;
  const float scale = mask.scale;
  // Slots past the last filled one of a final, partial batch are drawn from stale counters and
  // never read; zeroing them once keeps every read initialised.
  alignas(64) std::uint32_t c0[mask_batch] = {}, c1[mask_batch] = {}, c2[mask_batch] = {}, c3[mask_batch] = {};
  // Draw l of slot q (attention_kept's: half l % 2 of word l / 2) is read as draws[8 q + l]: the
  // 16-bit halves of the slot's four words as they lie in memory; kept[8 q + l], its keep.
  alignas(64) std::uint32_t words[mask_batch][4] = {};
  alignas(64) std::uint16_t draws[mask_batch * 8];
  alignas(64) float kept[mask_batch * 8];
  std::int64_t t = 0, block = 0;  // the entry and block of the batch's first slot
  for (std::int64_t s0 = 0; s0 < slots; s0 += mask_batch) {
    const int count = static_cast<int>(std::min<std::int64_t>(mask_batch, slots - s0));
    std::int64_t next_t = t, next_block = block;
    for (int q = 0; q < count; ++q) {
      detail::attention_counter(dst_of(next_t), src_of(next_t), static_cast<std::uint64_t>(next_block), c0[q], c1[q],
                                c2[q], c3[q]);
      if (++next_block == blocks) next_block = 0, ++next_t;
    }
    const int drawn = (count + 7) & ~7;
    for (int q = 0; q < drawn; ++q) philox4x32_block(c0[q], c1[q], c2[q], c3[q], mask.key64);
    for (int q = 0; q < count; ++q) {
      words[q][0] = c0[q];
      words[q][1] = c1[q];
      words[q][2] = c2[q];
      words[q][3] = c3[q];
    }
    std::memcpy(draws, words, sizeof(draws));
    // Every block full: slot s0 + q is keep[8 (s0 + q) + l] itself; else each slot's heads are
    // copied to their place.
    float* __restrict out = heads % 8 == 0 ? keep + s0 * 8 : kept;
    for (int x = 0; x < 8 * count; ++x) out[x] = draws[x] >= threshold ? scale : 0.0f;
    if (heads % 8 != 0) {
      for (int q = 0; q < count; ++q) {
        const std::int64_t in_block = std::min<std::int64_t>(8, heads - 8 * block);
        std::copy(kept + 8 * q, kept + 8 * q + in_block, keep + t * heads + 8 * block);
        if (++block == blocks) block = 0, ++t;
      }
    }
    t = next_t;
    block = next_block;
  }
}

// keep of row i of A's entries (destination i, sources its columns), and of row j of Aᵀ's
// (destinations its columns, source j): edge_keep over the row.
template <class I>
inline __attribute__((always_inline)) void row_keep(const EdgeMask& mask, std::int64_t heads,
                                                    const graph::CsrView<I>& a, std::int64_t i, float* __restrict keep) {
  const I* sources = a.indices + a.indptr[i];
  edge_keep(
      mask, heads, a.indptr[i + 1] - a.indptr[i], [&](std::int64_t) { return mask.dst_id(i); },
      [&](std::int64_t t) { return mask.src_id(static_cast<std::int64_t>(sources[t])); }, keep);
}
template <class I>
inline __attribute__((always_inline)) void column_keep(const EdgeMask& mask, std::int64_t heads,
                                                       const graph::CsrView<I>& at, std::int64_t j,
                                                       float* __restrict keep) {
  const I* destinations = at.indices + at.indptr[j];
  edge_keep(
      mask, heads, at.indptr[j + 1] - at.indptr[j],
      [&](std::int64_t t) { return mask.dst_id(static_cast<std::int64_t>(destinations[t])); },
      [&](std::int64_t) { return mask.src_id(j); }, keep);
}

// A scratch row of at least n floats (grown, never shrunk, within one range of rows).
inline float* scratch(std::vector<float>& buffer, std::int64_t n) {
  if (buffer.size() < static_cast<std::size_t>(n)) buffer.resize(static_cast<std::size_t>(n));
  return buffer.data();
}

inline __attribute__((always_inline)) void exp_in_place(float* __restrict x, std::int64_t n) {
  for (std::int64_t t = 0; t < n; ++t) x[t] = vector_exp(x[t]);
}

// Subtracts each head's maximum from the n x heads scores e (row-major), writing the maxima to m.
inline __attribute__((always_inline)) void subtract_head_max(float* __restrict e, std::int64_t n, std::int64_t heads,
                                                             float* __restrict m) {
  std::fill(m, m + heads, -std::numeric_limits<float>::infinity());
  for (std::int64_t t = 0; t < n; ++t)
    for (std::int64_t k = 0; k < heads; ++k) m[k] = std::max(m[k], e[t * heads + k]);
  for (std::int64_t t = 0; t < n; ++t)
    for (std::int64_t k = 0; k < heads; ++k) e[t * heads + k] -= m[k];
}

// The coefficients α = exp(e - max) / sum of n x heads scores e in place, from a row's per-head
// maximum and 1 / sum (backward's first pass).
inline __attribute__((always_inline)) void coefficients_from_stats(float* __restrict e, std::int64_t n,
                                                                   std::int64_t heads, const float* max,
                                                                   const float* inverse) {
  for (std::int64_t t = 0; t < n; ++t)
    for (std::int64_t k = 0; k < heads; ++k) e[t * heads + k] -= max[k];
  exp_in_place(e, n * heads);
  for (std::int64_t t = 0; t < n; ++t)
    for (std::int64_t k = 0; k < heads; ++k) e[t * heads + k] *= inverse[k];
}

// Requests every cache line of a row of n floats.
inline __attribute__((always_inline)) void request_row(const float* row, std::int64_t n) {
  for (std::int64_t f = 0; f < n; f += 16) __builtin_prefetch(row + f, 0, 3);
}

inline __attribute__((always_inline)) float dot(const float* __restrict x, const float* __restrict y,
                                                std::int64_t n) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (std::int64_t f = 0; f < n; ++f) s += x[f] * y[f];
  return s;
}

inline __attribute__((always_inline)) void add_scaled(float* __restrict out, const float* __restrict x, float w,
                                                      std::int64_t n) {
  for (std::int64_t f = 0; f < n; ++f) out[f] += w * x[f];
}

// Rows gathered by the kernels: row j starts at data + j · stride.
struct GatheredRows {
  const float* data;
  std::int64_t stride;
  const float* row(std::int64_t j) const { return data + j * stride; }
};

// The rest of forward for row i of A once its scores (entries x heads) are in w: each head's
// maximum into mi, the exponentials into w and their sums into si, the mask into keep (scratch),
// and y (heads x width, overwritten) = Σ_t exp(e_t - max) · keep_t · values[j_t] / sum per head;
// a row without entries gets zeros, its maximum and sum 0.
template <class I>
inline __attribute__((always_inline)) void softmax_and_gather(const graph::CsrView<I>& a, std::int64_t i,
                                                              const EdgeMask& mask, GatheredRows values,
                                                              std::int64_t heads, std::int64_t width, float* __restrict w,
                                                              float* __restrict keep, float* __restrict y, float* mi,
                                                              float* si) {
  const std::int64_t first = a.indptr[i], degree = a.indptr[i + 1] - first;
  std::fill(y, y + heads * width, 0.0f);
  if (degree == 0) {
    std::fill(mi, mi + heads, 0.0f);
    std::fill(si, si + heads, 0.0f);
    return;
  }
  const I* sources = a.indices + first;
  subtract_head_max(w, degree, heads, mi);
  exp_in_place(w, degree * heads);
  std::fill(si, si + heads, 0.0f);
  for (std::int64_t t = 0; t < degree; ++t)
    for (std::int64_t k = 0; k < heads; ++k) si[k] += w[t * heads + k];
  row_keep(mask, heads, a, i, keep);
  for (std::int64_t t = 0; t < degree; ++t) {
    if (first + t + gather_ahead < a.num_edges)
      request_row(values.row(static_cast<std::int64_t>(a.indices[first + t + gather_ahead])), heads * width);
    const float* vj = values.row(static_cast<std::int64_t>(sources[t]));
    for (std::int64_t k = 0; k < heads; ++k)
      add_scaled(y + k * width, vj + k * width, w[t * heads + k] * keep[t * heads + k], width);
  }
  for (std::int64_t k = 0; k < heads; ++k) {
    const float inverse = 1.0f / si[k];
    for (std::int64_t f = 0; f < width; ++f) y[k * width + f] *= inverse;
  }
}

// rows(begin, end) over row ranges of about equal work, a few per thread, scheduled dynamically.
template <class I, class Rows>
void over_rows(const graph::CsrView<I>& a, Rows&& rows) {
  if (a.num_rows == 0) return;
  const std::int64_t ranges = std::min<std::int64_t>(a.num_rows, ranges_per_thread * max_threads());
  const std::vector<std::int64_t> bounds = balanced_row_ranges(a, ranges);
  parallel_for(
      0, ranges,
      [&](std::int64_t k) { rows(bounds[static_cast<std::size_t>(k)], bounds[static_cast<std::size_t>(k) + 1]); }, 1);
}

// Backward's two passes: pass1(begin, end, pack) over A's row ranges, which fills each row's
// pack_width floats of the workspace `pack` (num_rows x pack_width), then pass2(begin, end, pack)
// over Aᵀ's, which reads them.
template <class I, class Pass1, class Pass2>
void two_passes(const graph::CsrView<I>& a, const graph::CsrView<I>& at, std::int64_t pack_width, Pass1&& pass1,
                Pass2&& pass2) {
  const std::unique_ptr<float, void (*)(float*)> pack(
      static_cast<float*>(allocate(static_cast<std::size_t>(a.num_rows * pack_width) * sizeof(float))),
      [](float* p) { release(p); });
  over_rows(a, [&](std::int64_t begin, std::int64_t end) { pass1(begin, end, pack.get()); });
  over_rows(at,
            [&](std::int64_t begin, std::int64_t end) { pass2(begin, end, static_cast<const float*>(pack.get())); });
}

}  // namespace halo::kernels::cpu::attention_rows
