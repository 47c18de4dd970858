// AttentionGraph: the self-looped graph and its transpose on the layer's device, and the calls
// of the attention kernels over them.
#include "train/layers/attention_graph.hpp"

#include <string>
#include <type_traits>

#include "graph/base/error.hpp"
#include "graph/build.hpp"

namespace halo::train {

using kernels::Tensor;

namespace {

graph::CsrGraph self_looped(const graph::CsrGraph& g) {
  HALO_EXPECTS(g.num_rows() == g.num_cols(), "AttentionGraph: needs a square graph, got " + std::to_string(g.num_rows()) +
                                                 " x " + std::to_string(g.num_cols()));
  return graph::with_self_loops(g);
}

}  // namespace

LocalAttentionGraph::LocalAttentionGraph(const graph::CsrGraph& g, kernels::Device device) {
  graph::CsrGraph looped = self_looped(g);
  at_ = CsrOperator(graph::transpose(looped), device);
  a_ = CsrOperator(std::move(looped), device);
}

Tensor LocalAttentionGraph::forward(const Tensor& h, const Tensor& src_score, const Tensor& dst_score,
                                    const kernels::AttentionSpec& spec, AttentionStats& stats) {
  return attention_forward_on(a_, h.view(), src_score.view(), dst_score.view(), spec, {}, stats);
}

AttentionGrads LocalAttentionGraph::backward(const Tensor& h, const Tensor& src_score, const Tensor& dst_score,
                                             const kernels::AttentionSpec& spec, const AttentionStats& stats,
                                             const Tensor& grad_out) {
  AttentionGrads g{Tensor::empty(h.rows(), h.cols(), h.device()), Tensor::empty(h.rows(), spec.heads, h.device()), {}};
  g.dst_score = attention_backward_on(a_, at_, h.view(), src_score.view(), dst_score.view(), spec, {}, stats, grad_out,
                                      g.h.view(), g.src_score.view());
  return g;
}

Tensor attention_forward_on(const CsrOperator& a, kernels::ConstTensorView h, kernels::ConstTensorView src_score,
                            kernels::ConstTensorView dst_score, const kernels::AttentionSpec& spec,
                            kernels::AttentionIds ids, AttentionStats& stats) {
  const std::int64_t n = a.num_rows();
  Tensor out = Tensor::empty(n, h.cols, h.device);
  stats.row_max = Tensor::empty(n, spec.heads, h.device);
  stats.row_sum = Tensor::empty(n, spec.heads, h.device);
  a.visit([&](const auto& view) {
    kernels::attention_forward(view, h, src_score, dst_score, spec, ids, out.view(), stats.row_max.view(),
                               stats.row_sum.view());
  });
  return out;
}

Tensor attention_backward_on(const CsrOperator& a, const CsrOperator& at, kernels::ConstTensorView h,
                             kernels::ConstTensorView src_score, kernels::ConstTensorView dst_score,
                             const kernels::AttentionSpec& spec, kernels::AttentionIds ids, const AttentionStats& stats,
                             const Tensor& grad_out, kernels::TensorView grad_h, kernels::TensorView grad_src) {
  Tensor grad_dst = Tensor::empty(a.num_rows(), spec.heads, h.device);
  a.visit([&](const auto& av) {
    at.visit([&](const auto& atv) {
      // A and its transpose share their index type (the transpose keeps A's).
      if constexpr (std::is_same_v<std::decay_t<decltype(av)>, std::decay_t<decltype(atv)>>)
        kernels::attention_backward(av, atv, h, src_score, dst_score, spec, ids, stats.row_max.view(),
                                    stats.row_sum.view(), grad_out.view(), grad_h, grad_src, grad_dst.view());
      else
        HALO_ASSERT(!"an attention graph and its transpose with different index types");
    });
  });
  return grad_dst;
}

}  // namespace halo::train
