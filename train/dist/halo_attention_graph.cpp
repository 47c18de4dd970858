// HaloAttentionGraph: the part's attention with its sources' halo rows exchanged each layer.
#include "train/dist/halo_attention_graph.hpp"

#include <limits>
#include <utility>

#include "graph/base/error.hpp"
#include "graph/build.hpp"

namespace halo::train::dist {

using kernels::ConstTensorView;
using kernels::Tensor;
using kernels::TensorView;

namespace {

constexpr std::int64_t any_id = std::numeric_limits<std::int64_t>::max();

}  // namespace

HaloAttentionGraph::HaloAttentionGraph(graph::CsrGraph a, const partition::LocalGraph& part, HaloExchange& exchange,
                                       kernels::Device device)
    : exchange_(&exchange),
      owned_ids_({part.local_to_global.data(), part.num_owned}, any_id, device, kernels::IndexUse::rows,
                 "HaloAttentionGraph"),
      local_ids_({part.local_to_global.data(), part.num_local()}, any_id, device, kernels::IndexUse::rows,
                 "HaloAttentionGraph") {
  HALO_EXPECTS(a.num_rows() == part.num_owned && a.num_cols() == part.num_local(),
               "HaloAttentionGraph: the part's rows are " + std::to_string(a.num_rows()) + " x " +
                   std::to_string(a.num_cols()) + ", expected owned x local " + std::to_string(part.num_owned) +
                   " x " + std::to_string(part.num_local()));
  at_ = CsrOperator(graph::transpose(a), device);
  a_ = CsrOperator(std::move(a), device);
}

Tensor HaloAttentionGraph::forward(const Tensor& h, const Tensor& src_score, const Tensor& dst_score,
                                   const kernels::AttentionSpec& spec, AttentionStats& stats) {
  const std::int64_t width = h.cols(), heads = spec.heads, owned = a_.num_rows();
  // [h | src_score] of every local row: the owned rows here, the halo rows from their owners.
  stats.sources = Tensor::empty(a_.num_cols(), width + heads, h.device());
  kernels::copy(h.view(), stats.sources.view().slice_cols(0, width).slice_rows(0, owned));
  kernels::copy(src_score.view(), stats.sources.view().slice_cols(width, width + heads).slice_rows(0, owned));
  exchange_->forward(stats.sources.view());
  return attention_forward_on(a_, stats.sources.view().slice_cols(0, width),
                              stats.sources.view().slice_cols(width, width + heads), dst_score.view(), spec,
                              {&owned_ids_, &local_ids_}, stats);
}

AttentionGrads HaloAttentionGraph::backward(const Tensor& h, const Tensor& /*src_score*/, const Tensor& dst_score,
                                            const kernels::AttentionSpec& spec, const AttentionStats& stats,
                                            const Tensor& grad_out) {
  const std::int64_t width = h.cols(), heads = spec.heads, owned = a_.num_rows();
  // The gradients of every local source row, then the halo rows' added into their owners' rows.
  Tensor grads = Tensor::empty(a_.num_cols(), width + heads, h.device());
  AttentionGrads g;
  g.dst_score = attention_backward_on(a_, at_, stats.sources.view().slice_cols(0, width),
                                      stats.sources.view().slice_cols(width, width + heads), dst_score.view(), spec,
                                      {&owned_ids_, &local_ids_}, stats, grad_out, grads.view().slice_cols(0, width),
                                      grads.view().slice_cols(width, width + heads));
  exchange_->backward(grads.view());
  g.h = Tensor::empty(owned, width, h.device());
  g.src_score = Tensor::empty(owned, heads, h.device());
  kernels::copy(grads.view().slice_cols(0, width).slice_rows(0, owned), g.h.view());
  kernels::copy(grads.view().slice_cols(width, width + heads).slice_rows(0, owned), g.src_score.view());
  return g;
}

}  // namespace halo::train::dist
