// CPU graph attention (GAT's additive scores) on the shared row machinery of
// kernels/cpu/attention_rows.hpp:
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
#include <cstdint>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/cpu/attention_rows.hpp"
#include "kernels/cpu/column_reduce.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/row_loop.hpp"

namespace halo::kernels::cpu {
namespace {

using namespace attention_rows;

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
  EdgeMask mask;

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
        mask(spec.dropout, spec.key, ids) {}
};

// The edge scores e = LeakyReLU(z) of n pre-activations z, in place: a flat pass that compiles to
// compares and blends (as one branch per score, taken at random, it cost a mispredict for every
// other score).
inline __attribute__((always_inline)) void leaky_relu(float* __restrict z, std::int64_t n, float slope) {
  for (std::int64_t x = 0; x < n; ++x) z[x] *= z[x] > 0.0f ? 1.0f : slope;
}

// leaky_relu, keeping each score's slope (1 or `slope`, LeakyReLU's derivative) for backward.
inline __attribute__((always_inline)) void leaky_relu(float* __restrict z, float* __restrict slopes, std::int64_t n,
                                                      float slope) {
  for (std::int64_t x = 0; x < n; ++x) {
    slopes[x] = z[x] > 0.0f ? 1.0f : slope;
    z[x] *= slopes[x];
  }
}

// Requests the source scores of entry e of A (when it has one), whose rows the score loops read at
// random: gather_ahead entries before their use they are as much a cache miss as the h rows.
template <class I>
inline __attribute__((always_inline)) void request_source_scores(const graph::CsrView<I>& a, const Operands& o,
                                                                 std::int64_t e) {
  if (e < a.num_edges) request_row(o.src + static_cast<std::int64_t>(a.indices[e]) * o.src_stride, o.heads);
}

template <class I>
inline __attribute__((always_inline)) void forward_rows(const graph::CsrView<I>& a, const Operands& o,
                                                        TensorView out, TensorView row_max, TensorView row_sum,
                                                        std::int64_t begin, std::int64_t end) {
  const std::int64_t heads = o.heads, width = o.width;
  std::vector<float> weight_buffer, keep_buffer;
  for (std::int64_t i = begin; i < end; ++i) {
    const std::int64_t first = a.indptr[i], degree = a.indptr[i + 1] - first;
    const I* sources = a.indices + first;
    const float* di = o.dst + i * o.dst_stride;
    float* __restrict w = scratch(weight_buffer, degree * heads);
    for (std::int64_t t = 0; t < degree; ++t) {
      request_source_scores(a, o, first + t + gather_ahead);
      const float* sj = o.src + static_cast<std::int64_t>(sources[t]) * o.src_stride;
      for (std::int64_t k = 0; k < heads; ++k) w[t * heads + k] = sj[k] + di[k];
    }
    leaky_relu(w, degree * heads, o.slope);
    softmax_and_gather(a, i, o.mask, {o.h, o.h_stride}, heads, width, w, scratch(keep_buffer, degree * heads),
                       out.row(i), row_max.row(i), row_sum.row(i));
  }
}

// The packed row of destination i for pass 2: [score | max | 1 / sum | Σ_j α · dα], H each.
template <class T>
T* packed_row(T* pack, std::int64_t heads, std::int64_t i) {
  return pack + i * 4 * heads;
}

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
      request_source_scores(a, o, first + t + gather_ahead);
      const float* sj = o.src + static_cast<std::int64_t>(sources[t]) * o.src_stride;
      for (std::int64_t k = 0; k < heads; ++k) alpha[t * heads + k] = sj[k] + di[k];
    }
    leaky_relu(alpha, slopes, degree * heads, o.slope);
    coefficients_from_stats(alpha, degree, heads, mi, inverse);
    row_keep(o.mask, heads, a, i, keep);
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
    // Σ_t α (dα - c) is 0, so the row's first slope r may come off every slope: a row whose
    // scores all have one sign gets exactly 0 (its dst score cancels in the softmax), not
    // rounding noise that Adam would scale to whole steps of a_dst.
    for (std::int64_t t = 0; t < degree; ++t)
      for (std::int64_t k = 0; k < heads; ++k)
        gd[k] += alpha[t * heads + k] * (dalpha[t * heads + k] - ci[k]) * (slopes[t * heads + k] - slopes[k]);
  }
}

// Pass 2 of backward, over Aᵀ's rows (sources j): grad_h and grad_src_score.
template <class I>
inline __attribute__((always_inline)) void src_rows(const graph::CsrView<I>& at, const Operands& o,
                                                    const float* pack, ConstTensorView grad_out, TensorView grad_h,
                                                    TensorView grad_src, std::int64_t begin, std::int64_t end) {
  const std::int64_t heads = o.heads, width = o.width, cols = heads * width;
  std::vector<float> alpha_buffer, keep_buffer, slope_buffer, c_buffer, max_buffer;
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
    float* __restrict m = scratch(max_buffer, degree * heads);
    for (std::int64_t t = 0; t < degree; ++t) {
      if (first + t + gather_ahead < at.num_edges)
        request_row(packed_row(pack, heads, static_cast<std::int64_t>(at.indices[first + t + gather_ahead])),
                    4 * heads);
      const float* pi = packed_row(pack, heads, static_cast<std::int64_t>(destinations[t]));
      for (std::int64_t k = 0; k < heads; ++k) {
        alpha[t * heads + k] = sj[k] + pi[k];
        m[t * heads + k] = pi[heads + k];
        keep[t * heads + k] = pi[2 * heads + k];  // 1 / sum until the exponentials are taken
        c[t * heads + k] = pi[3 * heads + k];
      }
    }
    leaky_relu(alpha, slopes, degree * heads, o.slope);
    for (std::int64_t t = 0; t < degree * heads; ++t) alpha[t] -= m[t];
    exp_in_place(alpha, degree * heads);
    for (std::int64_t t = 0; t < degree * heads; ++t) alpha[t] *= keep[t];
    column_keep(o.mask, heads, at, j, keep);
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
HALO_ATTENTION_CLONES void forward_range(const graph::CsrView<std::int32_t>& a, const Operands& o, TensorView out,
                                         TensorView row_max, TensorView row_sum, std::int64_t begin, std::int64_t end) {
  forward_rows(a, o, out, row_max, row_sum, begin, end);
}
HALO_ATTENTION_CLONES void forward_range(const graph::CsrView<std::int64_t>& a, const Operands& o, TensorView out,
                                         TensorView row_max, TensorView row_sum, std::int64_t begin, std::int64_t end) {
  forward_rows(a, o, out, row_max, row_sum, begin, end);
}
HALO_ATTENTION_CLONES void dst_range(const graph::CsrView<std::int32_t>& a, const Operands& o, ConstTensorView row_max,
                                     ConstTensorView row_sum, ConstTensorView grad_out, TensorView grad_dst,
                                     float* pack, std::int64_t begin, std::int64_t end) {
  dst_rows(a, o, row_max, row_sum, grad_out, grad_dst, pack, begin, end);
}
HALO_ATTENTION_CLONES void dst_range(const graph::CsrView<std::int64_t>& a, const Operands& o, ConstTensorView row_max,
                                     ConstTensorView row_sum, ConstTensorView grad_out, TensorView grad_dst,
                                     float* pack, std::int64_t begin, std::int64_t end) {
  dst_rows(a, o, row_max, row_sum, grad_out, grad_dst, pack, begin, end);
}
HALO_ATTENTION_CLONES void src_range(const graph::CsrView<std::int32_t>& at, const Operands& o, const float* pack,
                                     ConstTensorView grad_out, TensorView grad_h, TensorView grad_src,
                                     std::int64_t begin, std::int64_t end) {
  src_rows(at, o, pack, grad_out, grad_h, grad_src, begin, end);
}
HALO_ATTENTION_CLONES void src_range(const graph::CsrView<std::int64_t>& at, const Operands& o, const float* pack,
                                     ConstTensorView grad_out, TensorView grad_h, TensorView grad_src,
                                     std::int64_t begin, std::int64_t end) {
  src_rows(at, o, pack, grad_out, grad_h, grad_src, begin, end);
}
#undef HALO_ATTENTION_CLONES

}  // namespace

template <class I>
void attention_forward(const graph::CsrView<I>& a, ConstTensorView h, ConstTensorView src_score,
                       ConstTensorView dst_score, const AttentionSpec& spec, AttentionIds ids, TensorView out,
                       TensorView row_max, TensorView row_sum) {
  const Operands o(h, src_score, dst_score, spec, ids);
  over_rows(a, [&](std::int64_t begin, std::int64_t end) {
    forward_range(a, o, out, row_max, row_sum, begin, end);
  });
}

template <class I>
void attention_backward(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView h,
                        ConstTensorView src_score, ConstTensorView dst_score, const AttentionSpec& spec,
                        AttentionIds ids, ConstTensorView row_max, ConstTensorView row_sum, ConstTensorView grad_out,
                        TensorView grad_h, TensorView grad_src, TensorView grad_dst) {
  const Operands o(h, src_score, dst_score, spec, ids);
  // Pass 1 packs 4 H floats per destination row for pass 2.
  two_passes(
      a, at, attention_workspace_width(spec.heads, false),
      [&](std::int64_t begin, std::int64_t end, float* pack) {
        dst_range(a, o, row_max, row_sum, grad_out, grad_dst, pack, begin, end);
      },
      [&](std::int64_t begin, std::int64_t end, const float* pack) {
        src_range(at, o, pack, grad_out, grad_h, grad_src, begin, end);
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
