// CPU graph attention: row ranges of about equal work (kernels/cpu/row_ranges.hpp), each row by
// one thread in CSR order. A row's per-entry work is split into flat passes that vectorise: the
// scores of every entry and head into a scratch row, exp over all of them at once (vector_exp),
// the dropout mask's Philox blocks mask_batch at a time, then one sweep over the entries that
// gathers their feature rows, each requested gather_ahead entries before its use.
//   Forward: scores, each head's maximum, weights and sums, then the gather of h.
//   Backward pass 1 (A's rows): coefficients, dα = g_i · h_j · keep (the gather of h), Σ α · dα
//   and grad_dst_score; it packs what pass 2 reads of each destination (its score, maximum,
//   1 / sum and Σ α · dα: 4 H floats) into one row of a workspace.
//   Backward pass 2 (Aᵀ's rows): the coefficients again from the packed rows, then one gather of
//   the destinations' gradient rows for dα, grad_src_score and grad_h.
// The range loops are compiled for AVX-512, AVX2 and the x86-64 baseline and picked once at load
// time by the CPU it runs on (target_clones, as kernels/cpu/spmm.cpp); the clones may round
// differently, but one machine always runs the same one and every sum has a fixed order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "graph/base/parallel.hpp"
#include "graph/base/random.hpp"
#include "kernels/attention.hpp"
#include "kernels/cpu/column_reduce.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/row_loop.hpp"
#include "kernels/cpu/row_ranges.hpp"
#include "kernels/cpu/vector_exp.hpp"
#include "kernels/detail/attention_mask.hpp"

namespace halo::kernels::cpu {
namespace {

// Entries ahead of the one being summed whose gathered rows are requested: a gathered row is a
// cache miss the hardware prefetcher cannot predict.
constexpr std::int64_t gather_ahead = 8;
// Philox blocks drawn together in one vectorised loop (as kernels/cpu/dropout.cpp).
constexpr int mask_batch = 32;

// Raw operands shared by the passes.
struct Operands {
  const float* h;
  std::int64_t h_stride;
  const float* src;
  std::int64_t src_stride;
  const float* dst;
  std::int64_t dst_stride;
  std::int64_t heads;
  std::int64_t width;  // F, the columns per head
  float slope;
  bool dropout;
  std::uint64_t key64;
  std::uint32_t threshold;
  float scale;
  const std::int64_t* dst_ids;  // null: the row numbers
  const std::int64_t* src_ids;  // null: the column numbers

  Operands(ConstTensorView h_, ConstTensorView src_, ConstTensorView dst_, const AttentionSpec& spec, AttentionIds ids)
      : h(h_.data),
        h_stride(h_.stride),
        src(src_.data),
        src_stride(src_.stride),
        dst(dst_.data),
        dst_stride(dst_.stride),
        heads(spec.heads),
        width(h_.cols / spec.heads),
        slope(spec.negative_slope),
        dropout(spec.dropout > 0.0f),
        key64(detail::attention_key64(spec.key)),
        threshold(detail::attention_threshold(spec.dropout)),
        scale(dropout_scale(spec.dropout)),
        dst_ids(ids.dst != nullptr && ids.dst->size() > 0 ? ids.dst->host().data : nullptr),
        src_ids(ids.src != nullptr && ids.src->size() > 0 ? ids.src->host().data : nullptr) {}

  // LeakyReLU's slope at z: e = z · slope_at(z) is the edge score.
  float slope_at(float z) const { return z > 0.0f ? 1.0f : slope; }
  std::uint64_t dst_id(std::int64_t i) const { return static_cast<std::uint64_t>(dst_ids != nullptr ? dst_ids[i] : i); }
  std::uint64_t src_id(std::int64_t j) const { return static_cast<std::uint64_t>(src_ids != nullptr ? src_ids[j] : j); }
};

// A scratch row of at least n floats (grown, never shrunk, within one range of rows).
inline float* scratch(std::vector<float>& buffer, std::int64_t n) {
  if (buffer.size() < static_cast<std::size_t>(n)) buffer.resize(static_cast<std::size_t>(n));
  return buffer.data();
}

inline __attribute__((always_inline)) void exp_in_place(float* __restrict x, std::int64_t n) {
  for (std::int64_t t = 0; t < n; ++t) x[t] = vector_exp(x[t]);
}

// Requests every cache line of a row of n floats.
inline __attribute__((always_inline)) void request_row(const float* row, std::int64_t n) {
  for (std::int64_t f = 0; f < n; f += 16) __builtin_prefetch(row + f, 0, 3);
}

// keep[t · H + k] = mask · 1 / (1 - p) of head k of the edge dst_of(t) <- src_of(t) for t < n (1
// without dropout), the bits of kernels/detail/attention_mask.hpp.
template <class DstOf, class SrcOf>
inline __attribute__((always_inline)) void edge_keep(const Operands& o, std::int64_t n, DstOf dst_of, SrcOf src_of,
                                                     float* __restrict keep) {
  const std::int64_t heads = o.heads;
  if (!o.dropout) {
    std::fill(keep, keep + n * heads, 1.0f);
    return;
  }
  const std::int64_t blocks = (heads + 7) / 8, slots = n * blocks;
  // Slots past the last filled one of a final, partial batch are drawn from stale counters and
  // never read; zeroing them once keeps every read initialised.
  alignas(64) std::uint32_t c0[mask_batch] = {}, c1[mask_batch] = {}, c2[mask_batch] = {}, c3[mask_batch] = {};
  for (std::int64_t s0 = 0; s0 < slots; s0 += mask_batch) {
    const int count = static_cast<int>(std::min<std::int64_t>(mask_batch, slots - s0));
    for (int q = 0; q < count; ++q) {
      const std::int64_t t = (s0 + q) / blocks;
      detail::attention_counter(dst_of(t), src_of(t), static_cast<std::uint64_t>((s0 + q) % blocks), c0[q], c1[q],
                                c2[q], c3[q]);
    }
    for (int q = 0; q < mask_batch; ++q) philox4x32_block(c0[q], c1[q], c2[q], c3[q], o.key64);
    for (int q = 0; q < count; ++q) {
      const std::int64_t t = (s0 + q) / blocks, block = (s0 + q) % blocks;
      const std::uint32_t bits[4] = {c0[q], c1[q], c2[q], c3[q]};
      const std::int64_t in_block = std::min<std::int64_t>(8, heads - 8 * block);
      for (std::int64_t l = 0; l < in_block; ++l)
        keep[t * heads + 8 * block + l] = detail::attention_kept(bits, l, o.threshold) ? o.scale : 0.0f;
    }
  }
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

template <class I>
inline __attribute__((always_inline)) void forward_rows(const graph::CsrView<I>& a, const Operands& o,
                                                        TensorView out, TensorView row_max, TensorView row_sum,
                                                        std::int64_t begin, std::int64_t end) {
  const std::int64_t heads = o.heads, width = o.width, cols = heads * width;
  std::vector<float> weight_buffer, keep_buffer, m(static_cast<std::size_t>(heads)),
      sum(static_cast<std::size_t>(heads));
  for (std::int64_t i = begin; i < end; ++i) {
    float* __restrict y = out.row(i);
    std::fill(y, y + cols, 0.0f);
    float* mi = row_max.row(i);
    float* si = row_sum.row(i);
    const std::int64_t first = a.indptr[i], degree = a.indptr[i + 1] - first;
    if (degree == 0) {
      std::fill(mi, mi + heads, 0.0f);
      std::fill(si, si + heads, 0.0f);
      continue;
    }
    const I* sources = a.indices + first;
    const float* di = o.dst + i * o.dst_stride;
    float* __restrict w = scratch(weight_buffer, degree * heads);
    float* __restrict keep = scratch(keep_buffer, degree * heads);
    std::fill(m.begin(), m.end(), -std::numeric_limits<float>::infinity());
    for (std::int64_t t = 0; t < degree; ++t) {
      const float* sj = o.src + static_cast<std::int64_t>(sources[t]) * o.src_stride;
      for (std::int64_t k = 0; k < heads; ++k) {
        const float z = sj[k] + di[k];
        const float e = z * o.slope_at(z);
        w[t * heads + k] = e;
        m[k] = std::max(m[k], e);
      }
    }
    for (std::int64_t t = 0; t < degree; ++t)
      for (std::int64_t k = 0; k < heads; ++k) w[t * heads + k] -= m[k];
    exp_in_place(w, degree * heads);
    std::fill(sum.begin(), sum.end(), 0.0f);
    for (std::int64_t t = 0; t < degree; ++t)
      for (std::int64_t k = 0; k < heads; ++k) sum[k] += w[t * heads + k];
    edge_keep(
        o, degree, [&](std::int64_t) { return o.dst_id(i); },
        [&](std::int64_t t) { return o.src_id(static_cast<std::int64_t>(sources[t])); }, keep);
    for (std::int64_t t = 0; t < degree; ++t) {
      if (first + t + gather_ahead < a.num_edges)
        request_row(o.h + static_cast<std::int64_t>(a.indices[first + t + gather_ahead]) * o.h_stride, cols);
      const float* hj = o.h + static_cast<std::int64_t>(sources[t]) * o.h_stride;
      for (std::int64_t k = 0; k < heads; ++k)
        add_scaled(y + k * width, hj + k * width, w[t * heads + k] * keep[t * heads + k], width);
    }
    for (std::int64_t k = 0; k < heads; ++k) {
      const float inverse = 1.0f / sum[k];
      for (std::int64_t f = 0; f < width; ++f) y[k * width + f] *= inverse;
      mi[k] = m[k];
      si[k] = sum[k];
    }
  }
}

// The packed row of destination i for pass 2: [score | max | 1 / sum | Σ_j α · dα], H each.
inline float* packed_row(float* pack, std::int64_t heads, std::int64_t i) { return pack + i * 4 * heads; }

// Pass 1 of backward, over A's rows: grad_dst_score, and each row's packed row.
template <class I>
inline __attribute__((always_inline)) void dst_rows(const graph::CsrView<I>& a, const Operands& o,
                                                    ConstTensorView row_max, ConstTensorView row_sum,
                                                    ConstTensorView grad_out, TensorView grad_dst, float* pack,
                                                    std::int64_t begin, std::int64_t end) {
  const std::int64_t heads = o.heads, width = o.width, cols = heads * width;
  std::vector<float> alpha_buffer, keep_buffer, slope_buffer, dalpha_buffer;
  for (std::int64_t i = begin; i < end; ++i) {
    float* gd = grad_dst.row(i);
    std::fill(gd, gd + heads, 0.0f);
    const float* di = o.dst + i * o.dst_stride;
    const float* mi = row_max.row(i);
    const float* si = row_sum.row(i);
    float* pi = packed_row(pack, heads, i);
    float* inverse = pi + 2 * heads;
    float* ci = pi + 3 * heads;
    for (std::int64_t k = 0; k < heads; ++k) {
      pi[k] = di[k];
      pi[heads + k] = mi[k];
      inverse[k] = si[k] > 0.0f ? 1.0f / si[k] : 0.0f;
      ci[k] = 0.0f;
    }
    const std::int64_t first = a.indptr[i], degree = a.indptr[i + 1] - first;
    if (degree == 0) continue;
    const I* sources = a.indices + first;
    float* __restrict alpha = scratch(alpha_buffer, degree * heads);
    float* __restrict keep = scratch(keep_buffer, degree * heads);
    float* __restrict slopes = scratch(slope_buffer, degree * heads);
    float* __restrict dalpha = scratch(dalpha_buffer, degree * heads);
    for (std::int64_t t = 0; t < degree; ++t) {
      const float* sj = o.src + static_cast<std::int64_t>(sources[t]) * o.src_stride;
      for (std::int64_t k = 0; k < heads; ++k) {
        const float z = sj[k] + di[k];
        slopes[t * heads + k] = o.slope_at(z);
        alpha[t * heads + k] = z * slopes[t * heads + k] - mi[k];
      }
    }
    exp_in_place(alpha, degree * heads);
    for (std::int64_t t = 0; t < degree; ++t)
      for (std::int64_t k = 0; k < heads; ++k) alpha[t * heads + k] *= inverse[k];
    edge_keep(
        o, degree, [&](std::int64_t) { return o.dst_id(i); },
        [&](std::int64_t t) { return o.src_id(static_cast<std::int64_t>(sources[t])); }, keep);
    const float* gi = grad_out.row(i);
    for (std::int64_t t = 0; t < degree; ++t) {
      if (first + t + gather_ahead < a.num_edges)
        request_row(o.h + static_cast<std::int64_t>(a.indices[first + t + gather_ahead]) * o.h_stride, cols);
      const float* hj = o.h + static_cast<std::int64_t>(sources[t]) * o.h_stride;
      for (std::int64_t k = 0; k < heads; ++k)
        dalpha[t * heads + k] = dot(gi + k * width, hj + k * width, width) * keep[t * heads + k];
    }
    for (std::int64_t t = 0; t < degree; ++t)
      for (std::int64_t k = 0; k < heads; ++k) ci[k] += alpha[t * heads + k] * dalpha[t * heads + k];
    for (std::int64_t t = 0; t < degree; ++t)
      for (std::int64_t k = 0; k < heads; ++k)
        gd[k] += alpha[t * heads + k] * (dalpha[t * heads + k] - ci[k]) * slopes[t * heads + k];
  }
}

// Pass 2 of backward, over Aᵀ's rows (sources j): grad_h and grad_src_score.
template <class I>
inline __attribute__((always_inline)) void src_rows(const graph::CsrView<I>& at, const Operands& o,
                                                    const float* pack, ConstTensorView grad_out, TensorView grad_h,
                                                    TensorView grad_src, std::int64_t begin, std::int64_t end) {
  const std::int64_t heads = o.heads, width = o.width, cols = heads * width;
  std::vector<float> alpha_buffer, keep_buffer, slope_buffer, c_buffer;
  for (std::int64_t j = begin; j < end; ++j) {
    float* __restrict gh = grad_h.row(j);
    float* gs = grad_src.row(j);
    std::fill(gh, gh + cols, 0.0f);
    std::fill(gs, gs + heads, 0.0f);
    const std::int64_t first = at.indptr[j], degree = at.indptr[j + 1] - first;
    if (degree == 0) continue;
    const I* destinations = at.indices + first;
    const float* sj = o.src + j * o.src_stride;
    const float* hj = o.h + j * o.h_stride;
    float* __restrict alpha = scratch(alpha_buffer, degree * heads);
    float* __restrict keep = scratch(keep_buffer, degree * heads);
    float* __restrict slopes = scratch(slope_buffer, degree * heads);
    float* __restrict c = scratch(c_buffer, degree * heads);
    for (std::int64_t t = 0; t < degree; ++t) {
      const float* pi = packed_row(const_cast<float*>(pack), heads, static_cast<std::int64_t>(destinations[t]));
      for (std::int64_t k = 0; k < heads; ++k) {
        const float z = sj[k] + pi[k];
        slopes[t * heads + k] = o.slope_at(z);
        alpha[t * heads + k] = z * slopes[t * heads + k] - pi[heads + k];
        keep[t * heads + k] = pi[2 * heads + k];  // 1 / sum until the exponentials are taken
        c[t * heads + k] = pi[3 * heads + k];
      }
    }
    exp_in_place(alpha, degree * heads);
    for (std::int64_t t = 0; t < degree * heads; ++t) alpha[t] *= keep[t];
    edge_keep(
        o, degree, [&](std::int64_t t) { return o.dst_id(static_cast<std::int64_t>(destinations[t])); },
        [&](std::int64_t) { return o.src_id(j); }, keep);
    for (std::int64_t t = 0; t < degree; ++t) {
      if (first + t + gather_ahead < at.num_edges)
        request_row(grad_out.row(static_cast<std::int64_t>(at.indices[first + t + gather_ahead])), cols);
      const float* gi = grad_out.row(static_cast<std::int64_t>(destinations[t]));
      for (std::int64_t k = 0; k < heads; ++k) {
        const std::int64_t at_k = t * heads + k;
        const float dalpha = dot(gi + k * width, hj + k * width, width) * keep[at_k];
        gs[k] += alpha[at_k] * (dalpha - c[at_k]) * slopes[at_k];
        add_scaled(gh + k * width, gi + k * width, alpha[at_k] * keep[at_k], width);
      }
    }
  }
}

// The range loops for each index width, in the clones described at the top.
#define HALO_ATTENTION_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
HALO_ATTENTION_CLONES void forward_range_i32(const graph::CsrView<std::int32_t>& a, const Operands& o, TensorView out,
                                             TensorView row_max, TensorView row_sum, std::int64_t begin,
                                             std::int64_t end) {
  forward_rows(a, o, out, row_max, row_sum, begin, end);
}
HALO_ATTENTION_CLONES void forward_range_i64(const graph::CsrView<std::int64_t>& a, const Operands& o, TensorView out,
                                             TensorView row_max, TensorView row_sum, std::int64_t begin,
                                             std::int64_t end) {
  forward_rows(a, o, out, row_max, row_sum, begin, end);
}
HALO_ATTENTION_CLONES void dst_range_i32(const graph::CsrView<std::int32_t>& a, const Operands& o,
                                         ConstTensorView row_max, ConstTensorView row_sum, ConstTensorView grad_out,
                                         TensorView grad_dst, float* pack, std::int64_t begin, std::int64_t end) {
  dst_rows(a, o, row_max, row_sum, grad_out, grad_dst, pack, begin, end);
}
HALO_ATTENTION_CLONES void dst_range_i64(const graph::CsrView<std::int64_t>& a, const Operands& o,
                                         ConstTensorView row_max, ConstTensorView row_sum, ConstTensorView grad_out,
                                         TensorView grad_dst, float* pack, std::int64_t begin, std::int64_t end) {
  dst_rows(a, o, row_max, row_sum, grad_out, grad_dst, pack, begin, end);
}
HALO_ATTENTION_CLONES void src_range_i32(const graph::CsrView<std::int32_t>& at, const Operands& o, const float* pack,
                                         ConstTensorView grad_out, TensorView grad_h, TensorView grad_src,
                                         std::int64_t begin, std::int64_t end) {
  src_rows(at, o, pack, grad_out, grad_h, grad_src, begin, end);
}
HALO_ATTENTION_CLONES void src_range_i64(const graph::CsrView<std::int64_t>& at, const Operands& o, const float* pack,
                                         ConstTensorView grad_out, TensorView grad_h, TensorView grad_src,
                                         std::int64_t begin, std::int64_t end) {
  src_rows(at, o, pack, grad_out, grad_h, grad_src, begin, end);
}
#undef HALO_ATTENTION_CLONES

void forward_range(const graph::CsrView<std::int32_t>& a, const Operands& o, TensorView out, TensorView row_max,
                   TensorView row_sum, std::int64_t begin, std::int64_t end) {
  forward_range_i32(a, o, out, row_max, row_sum, begin, end);
}
void forward_range(const graph::CsrView<std::int64_t>& a, const Operands& o, TensorView out, TensorView row_max,
                   TensorView row_sum, std::int64_t begin, std::int64_t end) {
  forward_range_i64(a, o, out, row_max, row_sum, begin, end);
}
void dst_range(const graph::CsrView<std::int32_t>& a, const Operands& o, ConstTensorView row_max,
               ConstTensorView row_sum, ConstTensorView grad_out, TensorView grad_dst, float* pack,
               std::int64_t begin, std::int64_t end) {
  dst_range_i32(a, o, row_max, row_sum, grad_out, grad_dst, pack, begin, end);
}
void dst_range(const graph::CsrView<std::int64_t>& a, const Operands& o, ConstTensorView row_max,
               ConstTensorView row_sum, ConstTensorView grad_out, TensorView grad_dst, float* pack,
               std::int64_t begin, std::int64_t end) {
  dst_range_i64(a, o, row_max, row_sum, grad_out, grad_dst, pack, begin, end);
}
void src_range(const graph::CsrView<std::int32_t>& at, const Operands& o, const float* pack, ConstTensorView grad_out,
               TensorView grad_h, TensorView grad_src, std::int64_t begin, std::int64_t end) {
  src_range_i32(at, o, pack, grad_out, grad_h, grad_src, begin, end);
}
void src_range(const graph::CsrView<std::int64_t>& at, const Operands& o, const float* pack, ConstTensorView grad_out,
               TensorView grad_h, TensorView grad_src, std::int64_t begin, std::int64_t end) {
  src_range_i64(at, o, pack, grad_out, grad_h, grad_src, begin, end);
}

template <class I, class Rows>
void over_rows(const graph::CsrView<I>& a, Rows&& rows) {
  if (a.num_rows == 0) return;
  const std::int64_t ranges = std::min<std::int64_t>(a.num_rows, ranges_per_thread * max_threads());
  const std::vector<std::int64_t> bounds = balanced_row_ranges(a, ranges);
  parallel_for(
      0, ranges,
      [&](std::int64_t k) { rows(bounds[static_cast<std::size_t>(k)], bounds[static_cast<std::size_t>(k) + 1]); }, 1);
}

}  // namespace

template <class I>
void attention_forward(const graph::CsrView<I>& a, ConstTensorView h, ConstTensorView src_score,
                       ConstTensorView dst_score, const AttentionSpec& spec, AttentionIds ids, TensorView out,
                       TensorView row_max, TensorView row_sum) {
  const Operands o(h, src_score, dst_score, spec, ids);
  over_rows(a, [&](std::int64_t begin, std::int64_t end) { forward_range(a, o, out, row_max, row_sum, begin, end); });
}

template <class I>
void attention_backward(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView h,
                        ConstTensorView src_score, ConstTensorView dst_score, const AttentionSpec& spec,
                        AttentionIds ids, ConstTensorView row_max, ConstTensorView row_sum, ConstTensorView grad_out,
                        TensorView grad_h, TensorView grad_src, TensorView grad_dst) {
  const Operands o(h, src_score, dst_score, spec, ids);
  // The packed rows of pass 1 (num_rows x 4 H floats: kernels::attention_backward_workspace_bytes).
  const std::unique_ptr<float, void (*)(float*)> pack(
      static_cast<float*>(allocate(static_cast<std::size_t>(a.num_rows * 4 * spec.heads) * sizeof(float))),
      [](float* p) { release(p); });
  over_rows(a, [&](std::int64_t begin, std::int64_t end) {
    dst_range(a, o, row_max, row_sum, grad_out, grad_dst, pack.get(), begin, end);
  });
  over_rows(at, [&](std::int64_t begin, std::int64_t end) {
    src_range(at, o, pack.get(), grad_out, grad_h, grad_src, begin, end);
  });
}

template void attention_forward(const graph::CsrView<std::int32_t>&, ConstTensorView, ConstTensorView,
                                ConstTensorView, const AttentionSpec&, AttentionIds, TensorView, TensorView,
                                TensorView);
template void attention_forward(const graph::CsrView<std::int64_t>&, ConstTensorView, ConstTensorView,
                                ConstTensorView, const AttentionSpec&, AttentionIds, TensorView, TensorView,
                                TensorView);
template void attention_backward(const graph::CsrView<std::int32_t>&, const graph::CsrView<std::int32_t>&,
                                 ConstTensorView, ConstTensorView, ConstTensorView, const AttentionSpec&, AttentionIds,
                                 ConstTensorView, ConstTensorView, ConstTensorView, TensorView, TensorView, TensorView);
template void attention_backward(const graph::CsrView<std::int64_t>&, const graph::CsrView<std::int64_t>&,
                                 ConstTensorView, ConstTensorView, ConstTensorView, const AttentionSpec&, AttentionIds,
                                 ConstTensorView, ConstTensorView, ConstTensorView, TensorView, TensorView, TensorView);

void head_scores(ConstTensorView h, ConstTensorView a, TensorView score) {
  const std::int64_t heads = a.rows, width = a.cols;
  for_rows(h.rows, h.cols, [&](std::int64_t j) {
    const float* hj = h.row(j);
    float* sj = score.row(j);
    for (std::int64_t k = 0; k < heads; ++k) sj[k] = dot(hj + k * width, a.row(k), width);
  });
}

void head_scores_backward(ConstTensorView h, ConstTensorView a, ConstTensorView grad_score, TensorView grad_h,
                          TensorView grad_a) {
  const std::int64_t heads = a.rows, width = a.cols;
  // One pass over the rows: each row's grad_h, and its share of grad_a summed in double in a
  // fixed block order (reduce_rows), so the sum does not depend on the threads.
  const std::vector<double> total = reduce_rows(h.rows, heads * width, [&](std::int64_t j, double* acc) {
    const float* hj = h.row(j);
    const float* gj = grad_score.row(j);
    float* ghj = grad_h.row(j);
    for (std::int64_t k = 0; k < heads; ++k) {
      add_scaled(ghj + k * width, a.row(k), gj[k], width);
      for (std::int64_t f = 0; f < width; ++f) acc[k * width + f] += static_cast<double>(gj[k]) * hj[k * width + f];
    }
  });
  for (std::int64_t k = 0; k < heads; ++k)
    for (std::int64_t f = 0; f < width; ++f)
      grad_a.row(k)[f] += static_cast<float>(total[static_cast<std::size_t>(k * width + f)]);
}

}  // namespace halo::kernels::cpu
