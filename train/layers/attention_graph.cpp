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

AttentionGraph::AttentionGraph(const graph::CsrGraph& g, kernels::Device device) : device_(device) {
  graph::CsrGraph looped = self_looped(g);
  at_ = CsrOperator(graph::transpose(looped), device);
  a_ = CsrOperator(std::move(looped), device);
}

Tensor AttentionGraph::forward(const Tensor& h, const Tensor& src_score, const Tensor& dst_score,
                               const kernels::AttentionSpec& spec, AttentionStats& stats) const {
  const std::int64_t n = num_vertices();
  Tensor out = Tensor::empty(n, h.cols(), h.device());
  stats.row_max = Tensor::empty(n, spec.heads, h.device());
  stats.row_sum = Tensor::empty(n, spec.heads, h.device());
  a_.visit([&](const auto& a) {
    kernels::attention_forward(a, h.view(), src_score.view(), dst_score.view(), spec, {}, out.view(),
                               stats.row_max.view(), stats.row_sum.view());
  });
  return out;
}

AttentionGrads AttentionGraph::backward(const Tensor& h, const Tensor& src_score, const Tensor& dst_score,
                                        const kernels::AttentionSpec& spec, const AttentionStats& stats,
                                        const Tensor& grad_out) const {
  const std::int64_t n = num_vertices();
  AttentionGrads g{Tensor::empty(n, h.cols(), h.device()), Tensor::empty(n, spec.heads, h.device()),
                   Tensor::empty(n, spec.heads, h.device())};
  a_.visit([&](const auto& a) {
    at_.visit([&](const auto& at) {
      // A and its transpose share their index type (the transpose keeps A's).
      if constexpr (std::is_same_v<std::decay_t<decltype(a)>, std::decay_t<decltype(at)>>)
        kernels::attention_backward(a, at, h.view(), src_score.view(), dst_score.view(), spec, {},
                                    stats.row_max.view(), stats.row_sum.view(), grad_out.view(), g.h.view(),
                                    g.src_score.view(), g.dst_score.view());
      else
        HALO_ASSERT(!"an attention graph and its transpose with different index types");
    });
  });
  return g;
}

}  // namespace halo::train
