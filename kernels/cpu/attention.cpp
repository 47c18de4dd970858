// CPU graph attention: row ranges of about equal work (kernels/cpu/row_ranges.hpp), each row by
// one thread in CSR order. Forward: one sweep over the row's entries for the softmax's maximum,
// one that gathers the source rows with their unnormalised weights, then the division by the sum.
// Backward: over A's rows, the coefficients and dα of a row into a per-thread scratch, then
// grad_dst_score and the row's Σ α · dα; over Aᵀ's rows, grad_h and grad_src_score.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "graph/base/parallel.hpp"
#include "kernels/attention.hpp"
#include "kernels/cpu/column_reduce.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/row_loop.hpp"
#include "kernels/cpu/row_ranges.hpp"
#include "kernels/detail/attention_mask.hpp"

namespace halo::kernels::cpu {
namespace {

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

  float leaky(float z) const { return z > 0.0f ? z : slope * z; }
  float leaky_slope(float z) const { return z > 0.0f ? 1.0f : slope; }
  std::uint64_t dst_id(std::int64_t i) const { return static_cast<std::uint64_t>(dst_ids != nullptr ? dst_ids[i] : i); }
  std::uint64_t src_id(std::int64_t j) const { return static_cast<std::uint64_t>(src_ids != nullptr ? src_ids[j] : j); }

  // keep[k] = mask · 1 / (1 - p) of every head of the edge i <- j (1 without dropout).
  void keep_factors(std::int64_t i, std::int64_t j, float* keep) const {
    if (!dropout) {
      std::fill(keep, keep + heads, 1.0f);
      return;
    }
    std::uint32_t bits[4];
    for (std::int64_t k = 0; k < heads; ++k) {
      if (k % 8 == 0) detail::attention_draws(key64, dst_id(i), src_id(j), static_cast<std::uint64_t>(k / 8), bits);
      keep[k] = detail::attention_kept(bits, k, threshold) ? scale : 0.0f;
    }
  }
};

inline float dot(const float* __restrict x, const float* __restrict y, std::int64_t n) {
  float s = 0.0f;
  for (std::int64_t f = 0; f < n; ++f) s += x[f] * y[f];
  return s;
}

inline void add_scaled(float* __restrict out, const float* __restrict x, float w, std::int64_t n) {
  for (std::int64_t f = 0; f < n; ++f) out[f] += w * x[f];
}

template <class I>
void forward_rows(const graph::CsrView<I>& a, const Operands& o, TensorView out, TensorView row_max,
                  TensorView row_sum, std::int64_t begin, std::int64_t end) {
  const std::int64_t heads = o.heads, width = o.width;
  std::vector<float> m(static_cast<std::size_t>(heads)), sum(static_cast<std::size_t>(heads)),
      keep(static_cast<std::size_t>(heads));
  for (std::int64_t i = begin; i < end; ++i) {
    float* y = out.row(i);
    std::fill(y, y + heads * width, 0.0f);
    float* mi = row_max.row(i);
    float* si = row_sum.row(i);
    const std::int64_t first = a.indptr[i], last = a.indptr[i + 1];
    if (first == last) {
      std::fill(mi, mi + heads, 0.0f);
      std::fill(si, si + heads, 0.0f);
      continue;
    }
    const float* di = o.dst + i * o.dst_stride;
    std::fill(m.begin(), m.end(), -std::numeric_limits<float>::infinity());
    for (std::int64_t e = first; e < last; ++e) {
      const float* sj = o.src + static_cast<std::int64_t>(a.indices[e]) * o.src_stride;
      for (std::int64_t k = 0; k < heads; ++k) m[k] = std::max(m[k], o.leaky(sj[k] + di[k]));
    }
    std::fill(sum.begin(), sum.end(), 0.0f);
    for (std::int64_t e = first; e < last; ++e) {
      const auto j = static_cast<std::int64_t>(a.indices[e]);
      const float* sj = o.src + j * o.src_stride;
      const float* hj = o.h + j * o.h_stride;
      o.keep_factors(i, j, keep.data());
      for (std::int64_t k = 0; k < heads; ++k) {
        const float w = std::exp(o.leaky(sj[k] + di[k]) - m[k]);
        sum[k] += w;
        add_scaled(y + k * width, hj + k * width, w * keep[k], width);
      }
    }
    for (std::int64_t k = 0; k < heads; ++k) {
      const float inverse = 1.0f / sum[k];
      for (std::int64_t f = 0; f < width; ++f) y[k * width + f] *= inverse;
      mi[k] = m[k];
      si[k] = sum[k];
    }
  }
}

// The coefficient α of an edge and head, as forward formed it (exp(e - max) / sum).
inline float coefficient(const Operands& o, float z, float max, float sum) { return std::exp(o.leaky(z) - max) / sum; }

// Pass 1 of backward, over A's rows: grad_dst_score and c = Σ_j α · dα per row and head.
template <class I>
void dst_rows(const graph::CsrView<I>& a, const Operands& o, ConstTensorView row_max, ConstTensorView row_sum,
              ConstTensorView grad_out, TensorView grad_dst, TensorView c, std::int64_t begin, std::int64_t end) {
  const std::int64_t heads = o.heads, width = o.width;
  std::vector<float> keep(static_cast<std::size_t>(heads)), alpha, dalpha, slopes;
  for (std::int64_t i = begin; i < end; ++i) {
    float* gd = grad_dst.row(i);
    float* ci = c.row(i);
    const std::int64_t first = a.indptr[i], last = a.indptr[i + 1];
    const auto n = static_cast<std::size_t>((last - first) * heads);
    alpha.resize(n);
    dalpha.resize(n);
    slopes.resize(n);
    const float* di = o.dst + i * o.dst_stride;
    const float* mi = row_max.row(i);
    const float* si = row_sum.row(i);
    const float* gi = grad_out.row(i);
    std::fill(ci, ci + heads, 0.0f);
    for (std::int64_t e = first; e < last; ++e) {
      const auto j = static_cast<std::int64_t>(a.indices[e]);
      const float* sj = o.src + j * o.src_stride;
      const float* hj = o.h + j * o.h_stride;
      o.keep_factors(i, j, keep.data());
      for (std::int64_t k = 0; k < heads; ++k) {
        const std::size_t at = static_cast<std::size_t>((e - first) * heads + k);
        const float z = sj[k] + di[k];
        alpha[at] = coefficient(o, z, mi[k], si[k]);
        dalpha[at] = dot(gi + k * width, hj + k * width, width) * keep[k];
        slopes[at] = o.leaky_slope(z);
        ci[k] += alpha[at] * dalpha[at];
      }
    }
    std::fill(gd, gd + heads, 0.0f);
    for (std::size_t at = 0; at < n; ++at) {
      const auto k = static_cast<std::int64_t>(at % static_cast<std::size_t>(heads));
      gd[k] += alpha[at] * (dalpha[at] - ci[k]) * slopes[at];
    }
  }
}

// Pass 2 of backward, over Aᵀ's rows (sources j): grad_h and grad_src_score.
template <class I>
void src_rows(const graph::CsrView<I>& at, const Operands& o, ConstTensorView row_max, ConstTensorView row_sum,
              ConstTensorView grad_out, ConstTensorView c, TensorView grad_h, TensorView grad_src, std::int64_t begin,
              std::int64_t end) {
  const std::int64_t heads = o.heads, width = o.width;
  std::vector<float> keep(static_cast<std::size_t>(heads));
  for (std::int64_t j = begin; j < end; ++j) {
    float* gh = grad_h.row(j);
    float* gs = grad_src.row(j);
    std::fill(gh, gh + heads * width, 0.0f);
    std::fill(gs, gs + heads, 0.0f);
    const float* sj = o.src + j * o.src_stride;
    const float* hj = o.h + j * o.h_stride;
    for (std::int64_t e = at.indptr[j]; e < at.indptr[j + 1]; ++e) {
      const auto i = static_cast<std::int64_t>(at.indices[e]);
      const float* di = o.dst + i * o.dst_stride;
      const float* mi = row_max.row(i);
      const float* si = row_sum.row(i);
      const float* ci = c.row(i);
      const float* gi = grad_out.row(i);
      o.keep_factors(i, j, keep.data());
      for (std::int64_t k = 0; k < heads; ++k) {
        const float z = sj[k] + di[k];
        const float alpha = coefficient(o, z, mi[k], si[k]);
        const float dalpha = dot(gi + k * width, hj + k * width, width) * keep[k];
        gs[k] += alpha * (dalpha - ci[k]) * o.leaky_slope(z);
        add_scaled(gh + k * width, gi + k * width, alpha * keep[k], width);
      }
    }
  }
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
  over_rows(a, [&](std::int64_t begin, std::int64_t end) { forward_rows(a, o, out, row_max, row_sum, begin, end); });
}

template <class I>
void attention_backward(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView h,
                        ConstTensorView src_score, ConstTensorView dst_score, const AttentionSpec& spec,
                        AttentionIds ids, ConstTensorView row_max, ConstTensorView row_sum, ConstTensorView grad_out,
                        TensorView grad_h, TensorView grad_src, TensorView grad_dst) {
  const Operands o(h, src_score, dst_score, spec, ids);
  const std::unique_ptr<float, void (*)(float*)> c_data(
      static_cast<float*>(allocate(static_cast<std::size_t>(a.num_rows * spec.heads) * sizeof(float))),
      [](float* p) { release(p); });
  const TensorView c{c_data.get(), a.num_rows, spec.heads, spec.heads, h.device};
  over_rows(a, [&](std::int64_t begin, std::int64_t end) {
    dst_rows(a, o, row_max, row_sum, grad_out, grad_dst, c, begin, end);
  });
  over_rows(at, [&](std::int64_t begin, std::int64_t end) {
    src_rows(at, o, row_max, row_sum, grad_out, c, grad_h, grad_src, begin, end);
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
