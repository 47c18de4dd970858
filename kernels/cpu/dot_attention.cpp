// CPU scaled dot-product attention on the shared row machinery of kernels/cpu/attention_rows.hpp:
//   Forward: each entry's scores (the gather of its key row), each head's maximum, weights and
//   sums, then the gather of the value rows.
//   Backward pass 1 (A's rows): the coefficients again, dα = g_i · v_j · keep (the gather of the
//   value rows), Σ α · dα, de = α · (dα - Σ α · dα), then grad_query_i = Σ_j de · k_j (the key
//   rows again, most still in cache); it packs each row's maximum, 1 / sum and Σ α · dα (3 H
//   floats) for pass 2.
//   Backward pass 2 (Aᵀ's rows j): each destination's score again (the gather of its query row),
//   then one sweep gathering the destinations' gradient rows for dα, grad_keys_j += de · q_i and
//   grad_values_j += α' · g_i.
// The range loops are compiled for AVX-512, AVX2 and the x86-64 baseline (target_clones), as
// kernels/cpu/attention.cpp's.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/attention_rows.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/dot_attention.hpp"

namespace halo::kernels::cpu {
namespace {

using namespace attention_rows;

struct Operands {
  const float* q;
  std::int64_t q_stride;
  const float* k;
  std::int64_t k_stride;
  const float* v;
  std::int64_t v_stride;
  std::int64_t heads;
  std::int64_t key_width;    // Fk
  std::int64_t value_width;  // Fv
  EdgeMask mask;

  Operands(ConstTensorView query, ConstTensorView keys, ConstTensorView values, const DotAttentionSpec& spec,
           AttentionIds ids)
      : q(query.data),
        q_stride(query.stride),
        k(keys.data),
        k_stride(keys.stride),
        v(values.data),
        v_stride(values.stride),
        heads(spec.heads),
        key_width(keys.cols / spec.heads),
        value_width(values.cols / spec.heads),
        mask(spec.dropout, spec.key, ids) {}

  const float* key_row(std::int64_t j) const { return k + j * k_stride; }
  const float* value_row(std::int64_t j) const { return v + j * v_stride; }
  const float* query_row(std::int64_t i) const { return q + i * q_stride; }
};

// e[t · H + k] = q_i · k_j of head k for the row's entries `sources` (their key rows gathered).
template <class I>
inline __attribute__((always_inline)) void row_scores(const graph::CsrView<I>& a, const Operands& o, std::int64_t i,
                                                      float* __restrict e) {
  const std::int64_t first = a.indptr[i], degree = a.indptr[i + 1] - first;
  const std::int64_t heads = o.heads, fk = o.key_width;
  const float* qi = o.query_row(i);
  for (std::int64_t t = 0; t < degree; ++t) {
    if (first + t + gather_ahead < a.num_edges)
      request_row(o.key_row(static_cast<std::int64_t>(a.indices[first + t + gather_ahead])), heads * fk);
    const float* kj = o.key_row(static_cast<std::int64_t>(a.indices[first + t]));
    for (std::int64_t h = 0; h < heads; ++h) e[t * heads + h] = dot(qi + h * fk, kj + h * fk, fk);
  }
}

template <class I>
inline __attribute__((always_inline)) void forward_rows(const graph::CsrView<I>& a, const Operands& o,
                                                        TensorView out, TensorView row_max, TensorView row_sum,
                                                        std::int64_t begin, std::int64_t end) {
  const std::int64_t heads = o.heads, fv = o.value_width;
  std::vector<float> weight_buffer, keep_buffer;
  for (std::int64_t i = begin; i < end; ++i) {
    const std::int64_t degree = a.indptr[i + 1] - a.indptr[i];
    float* __restrict w = scratch(weight_buffer, degree * heads);
    row_scores(a, o, i, w);
    softmax_and_gather(a, i, o.mask, {o.v, o.v_stride}, heads, fv, w, scratch(keep_buffer, degree * heads),
                       out.row(i), row_max.row(i), row_sum.row(i));
  }
}

// The packed row of destination i for pass 2: [max | 1 / sum | Σ_j α · dα], H each.
template <class T>
T* packed_row(T* pack, std::int64_t heads, std::int64_t i) {
  return pack + i * 3 * heads;
}

// Pass 1 of backward, over A's rows: grad_query, and each row's packed row.
template <class I>
inline __attribute__((always_inline)) void dst_rows(const graph::CsrView<I>& a, const Operands& o,
                                                    ConstTensorView row_max, ConstTensorView row_sum,
                                                    ConstTensorView grad_out, TensorView grad_query, float* pack,
                                                    std::int64_t begin, std::int64_t end) {
  const std::int64_t heads = o.heads, fk = o.key_width, fv = o.value_width;
  std::vector<float> alpha_buffer, keep_buffer, delta_buffer;
  for (std::int64_t i = begin; i < end; ++i) {
    float* __restrict gq = grad_query.row(i);
    std::fill(gq, gq + heads * fk, 0.0f);
    const float* mi = row_max.row(i);
    const float* si = row_sum.row(i);
    float* pi = packed_row(pack, heads, i);
    float* inverse = pi + heads;
    float* ci = pi + 2 * heads;
    for (std::int64_t h = 0; h < heads; ++h) {
      pi[h] = mi[h];
      inverse[h] = si[h] > 0.0f ? 1.0f / si[h] : 0.0f;
      ci[h] = 0.0f;
    }
    const std::int64_t first = a.indptr[i], degree = a.indptr[i + 1] - first;
    if (degree == 0) continue;
    const I* sources = a.indices + first;
    float* __restrict alpha = scratch(alpha_buffer, degree * heads);
    float* __restrict keep = scratch(keep_buffer, degree * heads);
    float* __restrict delta = scratch(delta_buffer, degree * heads);  // dα, then de
    row_scores(a, o, i, alpha);
    coefficients_from_stats(alpha, degree, heads, mi, inverse);
    row_keep(o.mask, heads, a, i, keep);
    const float* gi = grad_out.row(i);
    for (std::int64_t t = 0; t < degree; ++t) {
      if (first + t + gather_ahead < a.num_edges)
        request_row(o.value_row(static_cast<std::int64_t>(a.indices[first + t + gather_ahead])), heads * fv);
      const float* vj = o.value_row(static_cast<std::int64_t>(sources[t]));
      for (std::int64_t h = 0; h < heads; ++h)
        delta[t * heads + h] = dot(gi + h * fv, vj + h * fv, fv) * keep[t * heads + h];
    }
    for (std::int64_t t = 0; t < degree; ++t)
      for (std::int64_t h = 0; h < heads; ++h) ci[h] += alpha[t * heads + h] * delta[t * heads + h];
    for (std::int64_t t = 0; t < degree; ++t)
      for (std::int64_t h = 0; h < heads; ++h)
        delta[t * heads + h] = alpha[t * heads + h] * (delta[t * heads + h] - ci[h]);
    for (std::int64_t t = 0; t < degree; ++t) {
      const float* kj = o.key_row(static_cast<std::int64_t>(sources[t]));
      for (std::int64_t h = 0; h < heads; ++h) add_scaled(gq + h * fk, kj + h * fk, delta[t * heads + h], fk);
    }
  }
}

// Pass 2 of backward, over Aᵀ's rows (sources j): grad_keys and grad_values.
template <class I>
inline __attribute__((always_inline)) void src_rows(const graph::CsrView<I>& at, const Operands& o,
                                                    const float* pack, ConstTensorView grad_out, TensorView grad_keys,
                                                    TensorView grad_values, std::int64_t begin, std::int64_t end) {
  const std::int64_t heads = o.heads, fk = o.key_width, fv = o.value_width;
  std::vector<float> alpha_buffer, keep_buffer, c_buffer;
  for (std::int64_t j = begin; j < end; ++j) {
    float* __restrict gk = grad_keys.row(j);
    float* __restrict gv = grad_values.row(j);
    std::fill(gk, gk + heads * fk, 0.0f);
    std::fill(gv, gv + heads * fv, 0.0f);
    const std::int64_t first = at.indptr[j], degree = at.indptr[j + 1] - first;
    if (degree == 0) continue;
    const I* destinations = at.indices + first;
    const float* kj = o.key_row(j);
    const float* vj = o.value_row(j);
    float* __restrict alpha = scratch(alpha_buffer, degree * heads);
    float* __restrict keep = scratch(keep_buffer, degree * heads);
    float* __restrict c = scratch(c_buffer, degree * heads);
    for (std::int64_t t = 0; t < degree; ++t) {
      if (first + t + gather_ahead < at.num_edges)
        request_row(o.query_row(static_cast<std::int64_t>(at.indices[first + t + gather_ahead])), heads * fk);
      const auto i = static_cast<std::int64_t>(destinations[t]);
      const float* qi = o.query_row(i);
      const float* pi = packed_row(pack, heads, i);
      for (std::int64_t h = 0; h < heads; ++h) {
        alpha[t * heads + h] = dot(qi + h * fk, kj + h * fk, fk) - pi[h];
        keep[t * heads + h] = pi[heads + h];  // 1 / sum until the exponentials are taken
        c[t * heads + h] = pi[2 * heads + h];
      }
    }
    exp_in_place(alpha, degree * heads);
    for (std::int64_t t = 0; t < degree * heads; ++t) alpha[t] *= keep[t];
    column_keep(o.mask, heads, at, j, keep);
    for (std::int64_t t = 0; t < degree; ++t) {
      if (first + t + gather_ahead < at.num_edges)
        request_row(grad_out.row(static_cast<std::int64_t>(at.indices[first + t + gather_ahead])), heads * fv);
      const auto i = static_cast<std::int64_t>(destinations[t]);
      const float* gi = grad_out.row(i);
      const float* qi = o.query_row(i);
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t at_h = t * heads + h;
        const float dalpha = dot(gi + h * fv, vj + h * fv, fv) * keep[at_h];
        add_scaled(gk + h * fk, qi + h * fk, alpha[at_h] * (dalpha - c[at_h]), fk);
        add_scaled(gv + h * fv, gi + h * fv, alpha[at_h] * keep[at_h], fv);
      }
    }
  }
}

// The range loops for each index width, in the clones described at the top.
#define HALO_DOT_ATTENTION_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
HALO_DOT_ATTENTION_CLONES void forward_range(const graph::CsrView<std::int32_t>& a, const Operands& o, TensorView out,
                                             TensorView row_max, TensorView row_sum, std::int64_t begin,
                                             std::int64_t end) {
  forward_rows(a, o, out, row_max, row_sum, begin, end);
}
HALO_DOT_ATTENTION_CLONES void forward_range(const graph::CsrView<std::int64_t>& a, const Operands& o, TensorView out,
                                             TensorView row_max, TensorView row_sum, std::int64_t begin,
                                             std::int64_t end) {
  forward_rows(a, o, out, row_max, row_sum, begin, end);
}
HALO_DOT_ATTENTION_CLONES void dst_range(const graph::CsrView<std::int32_t>& a, const Operands& o,
                                         ConstTensorView row_max, ConstTensorView row_sum, ConstTensorView grad_out,
                                         TensorView grad_query, float* pack, std::int64_t begin, std::int64_t end) {
  dst_rows(a, o, row_max, row_sum, grad_out, grad_query, pack, begin, end);
}
HALO_DOT_ATTENTION_CLONES void dst_range(const graph::CsrView<std::int64_t>& a, const Operands& o,
                                         ConstTensorView row_max, ConstTensorView row_sum, ConstTensorView grad_out,
                                         TensorView grad_query, float* pack, std::int64_t begin, std::int64_t end) {
  dst_rows(a, o, row_max, row_sum, grad_out, grad_query, pack, begin, end);
}
HALO_DOT_ATTENTION_CLONES void src_range(const graph::CsrView<std::int32_t>& at, const Operands& o, const float* pack,
                                         ConstTensorView grad_out, TensorView grad_keys, TensorView grad_values,
                                         std::int64_t begin, std::int64_t end) {
  src_rows(at, o, pack, grad_out, grad_keys, grad_values, begin, end);
}
HALO_DOT_ATTENTION_CLONES void src_range(const graph::CsrView<std::int64_t>& at, const Operands& o, const float* pack,
                                         ConstTensorView grad_out, TensorView grad_keys, TensorView grad_values,
                                         std::int64_t begin, std::int64_t end) {
  src_rows(at, o, pack, grad_out, grad_keys, grad_values, begin, end);
}
#undef HALO_DOT_ATTENTION_CLONES

}  // namespace

template <class I>
void dot_attention_forward(const graph::CsrView<I>& a, ConstTensorView query, ConstTensorView keys,
                           ConstTensorView values, const DotAttentionSpec& spec, AttentionIds ids, TensorView out,
                           TensorView row_max, TensorView row_sum) {
  const Operands o(query, keys, values, spec, ids);
  over_rows(a, [&](std::int64_t begin, std::int64_t end) {
    forward_range(a, o, out, row_max, row_sum, begin, end);
  });
}

template <class I>
void dot_attention_backward(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView query,
                            ConstTensorView keys, ConstTensorView values, const DotAttentionSpec& spec,
                            AttentionIds ids, ConstTensorView row_max, ConstTensorView row_sum,
                            ConstTensorView grad_out, TensorView grad_query, TensorView grad_keys,
                            TensorView grad_values) {
  const Operands o(query, keys, values, spec, ids);
  // Pass 1 packs 3 H floats per destination row for pass 2.
  two_passes(
      a, at, 3 * spec.heads,
      [&](std::int64_t begin, std::int64_t end, float* pack) {
        dst_range(a, o, row_max, row_sum, grad_out, grad_query, pack, begin, end);
      },
      [&](std::int64_t begin, std::int64_t end, const float* pack) {
        src_range(at, o, pack, grad_out, grad_keys, grad_values, begin, end);
      });
}

template void dot_attention_forward(const graph::CsrView<std::int32_t>&, ConstTensorView, ConstTensorView,
                                    ConstTensorView, const DotAttentionSpec&, AttentionIds, TensorView, TensorView,
                                    TensorView);
template void dot_attention_forward(const graph::CsrView<std::int64_t>&, ConstTensorView, ConstTensorView,
                                    ConstTensorView, const DotAttentionSpec&, AttentionIds, TensorView, TensorView,
                                    TensorView);
template void dot_attention_backward(const graph::CsrView<std::int32_t>&, const graph::CsrView<std::int32_t>&,
                                     ConstTensorView, ConstTensorView, ConstTensorView, const DotAttentionSpec&,
                                     AttentionIds, ConstTensorView, ConstTensorView, ConstTensorView, TensorView,
                                     TensorView, TensorView);
template void dot_attention_backward(const graph::CsrView<std::int64_t>&, const graph::CsrView<std::int64_t>&,
                                     ConstTensorView, ConstTensorView, ConstTensorView, const DotAttentionSpec&,
                                     AttentionIds, ConstTensorView, ConstTensorView, ConstTensorView, TensorView,
                                     TensorView, TensorView);

}  // namespace halo::kernels::cpu
