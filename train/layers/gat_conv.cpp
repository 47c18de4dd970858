// GatConv: the transform, the per-head scores, the fused attention pass and their backward.
#include "train/layers/gat_conv.hpp"

#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/attention.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "train/layers/init.hpp"

namespace halo::train {

using kernels::Tensor;
using kernels::Transpose;

GatConv::GatConv(AttentionGraph& graph, std::int64_t in_dim, const GatConvOptions& options, const std::string& name,
                 kernels::Device device)
    : graph_(&graph), name_(name), options_(options) {
  HALO_EXPECTS(in_dim > 0 && options.heads > 0 && options.out_per_head > 0,
               "GatConv " + name + ": input width, heads and width per head must be positive, got " +
                   std::to_string(in_dim) + ", " + std::to_string(options.heads) + " and " +
                   std::to_string(options.out_per_head));
  HALO_EXPECTS(options.attention_dropout >= 0.0f && options.attention_dropout < 1.0f,
               "GatConv " + name + ": attention dropout must be in [0, 1), got " +
                   std::to_string(options.attention_dropout));
  const std::int64_t heads = options.heads, width = options.out_per_head;
  weight_ = make_parameter(name + ".weight", in_dim, heads * width, device);
  att_src_ = make_parameter(name + ".att_src", heads, width, device);
  att_dst_ = make_parameter(name + ".att_dst", heads, width, device);
  if (options.bias) bias_ = make_parameter(name + ".bias", 1, out_dim(), device);
  if (options.residual) residual_ = make_parameter(name + ".res_weight", in_dim, out_dim(), device);
  if (!options.concat) {
    std::vector<float> mean(static_cast<std::size_t>(heads * width * width), 0.0f);
    for (std::int64_t k = 0; k < heads; ++k)
      for (std::int64_t f = 0; f < width; ++f)
        mean[static_cast<std::size_t>((k * width + f) * width + f)] = 1.0f / static_cast<float>(heads);
    head_mean_ = Tensor::from_vector(heads * width, width, mean, device);
  }
}

kernels::AttentionSpec GatConv::spec(const Step& step) const {
  return {options_.heads, options_.negative_slope, step.training ? options_.attention_dropout : 0.0f,
          {step.seed, step.epoch, options_.layer}};
}

Tensor GatConv::forward(const LayerInput& x, const Step& step) {
  HALO_EXPECTS(x.cols() == weight_.value.rows() && x.rows() == graph_->num_vertices(),
               "GatConv " + name_ + ": input is " + std::to_string(x.rows()) + " x " + std::to_string(x.cols()) +
                   ", expected " + std::to_string(graph_->num_vertices()) + " x " +
                   std::to_string(weight_.value.rows()));
  HALO_EXPECTS(!x.precomputed(), "GatConv " + name_ + ": attention cannot start from a precomputed Â·x");
  saved_ = false;
  input_ = LayerInput();
  Tensor h = x.x.multiply(weight_.value.view());
  const std::int64_t n = h.rows(), heads = options_.heads;
  Tensor src = Tensor::empty(n, heads, h.device()), dst = Tensor::empty(n, heads, h.device());
  kernels::head_scores(h.view(), att_src_.value.view(), src.view());
  kernels::head_scores(h.view(), att_dst_.value.view(), dst.view());
  AttentionStats stats;
  Tensor out = graph_->forward(h, src, dst, spec(step), stats);
  if (!options_.concat) {
    Tensor mean = Tensor::empty(n, options_.out_per_head, h.device());
    kernels::gemm(out.view(), Transpose::no, head_mean_.view(), Transpose::no, mean.view());
    out = std::move(mean);
  }
  if (options_.residual) x.x.multiply(residual_.value.view(), out.view(), 1.0f);
  finish_output(out, options_.bias ? &bias_ : nullptr, step);
  if (step.training) {
    saved_ = true;
    input_ = x;
    if (!recompute_projection_) {
      h_ = std::move(h);
      src_score_ = std::move(src);
      dst_score_ = std::move(dst);
    }
    stats_ = std::move(stats);
  }
  return out;
}

Tensor GatConv::backward(Tensor grad_y, const Step& step) {
  HALO_EXPECTS(saved_, "GatConv " + name_ + ": backward needs a training forward before it");
  HALO_EXPECTS(grad_y.rows() == graph_->num_vertices() && grad_y.cols() == out_dim(),
               "GatConv " + name_ + ": gradient is " + std::to_string(grad_y.rows()) + " x " +
                   std::to_string(grad_y.cols()) + ", the output " + std::to_string(graph_->num_vertices()) + " x " +
                   std::to_string(out_dim()));
  saved_ = false;
  if (recompute_projection_) {  // x·W and its scores as forward computed them
    h_ = input_.x.multiply(weight_.value.view());
    src_score_ = Tensor::empty(h_.rows(), options_.heads, h_.device());
    dst_score_ = Tensor::empty(h_.rows(), options_.heads, h_.device());
    kernels::head_scores(h_.view(), att_src_.value.view(), src_score_.view());
    kernels::head_scores(h_.view(), att_dst_.value.view(), dst_score_.view());
  }
  if (options_.bias) kernels::column_sums(grad_y.view(), bias_.grad.view(), true);
  // d loss / d (the attention's output): grad_y itself when the heads are concatenated.
  Tensor head_grad;
  if (!options_.concat) {
    head_grad = Tensor::empty(grad_y.rows(), head_mean_.rows(), grad_y.device());
    kernels::gemm(grad_y.view(), Transpose::no, head_mean_.view(), Transpose::yes, head_grad.view());
  }
  AttentionGrads g =
      graph_->backward(h_, src_score_, dst_score_, spec(step), stats_, options_.concat ? grad_y : head_grad);
  head_grad = Tensor();
  if (!options_.residual) grad_y = Tensor();
  kernels::head_scores_backward(h_.view(), att_src_.value.view(), g.src_score.view(), g.h.view(), att_src_.grad.view());
  kernels::head_scores_backward(h_.view(), att_dst_.value.view(), g.dst_score.view(), g.h.view(), att_dst_.grad.view());
  h_ = Tensor();
  src_score_ = Tensor();
  dst_score_ = Tensor();
  stats_ = AttentionStats();
  if (options_.residual)
    input_.x.add_transposed_products({{g.h.view(), weight_.grad.view()}, {grad_y.view(), residual_.grad.view()}});
  else
    input_.x.add_transposed_products({{g.h.view(), weight_.grad.view()}});
  input_ = LayerInput();
  Tensor grad_x;
  if (!input_grad()) return grad_x;
  grad_x = Tensor::empty(g.h.rows(), weight_.value.rows(), g.h.device());
  kernels::gemm(g.h.view(), Transpose::no, weight_.value.view(), Transpose::yes, grad_x.view());
  if (options_.residual)
    kernels::gemm(grad_y.view(), Transpose::no, residual_.value.view(), Transpose::yes, grad_x.view(), 1.0f, 1.0f);
  return grad_x;
}

std::vector<Parameter*> GatConv::parameters() {
  std::vector<Parameter*> all{&weight_, &att_src_, &att_dst_};
  if (options_.bias) all.push_back(&bias_);
  if (options_.residual) all.push_back(&residual_);
  return all;
}

}  // namespace halo::train
