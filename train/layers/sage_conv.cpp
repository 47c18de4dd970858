// SageConv: forward and backward, ordered so the aggregation carries the narrower width.
#include "train/layers/sage_conv.hpp"

#include <utility>

#include "graph/base/error.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "train/layers/init.hpp"

namespace halo::train {

using kernels::Tensor;
using kernels::Transpose;

SageConv::SageConv(Aggregation& mean, std::int64_t in_dim, std::int64_t out_dim, bool bias, const std::string& name,
                   kernels::Device device)
    : mean_(&mean), name_(name), has_bias_(bias) {
  HALO_EXPECTS(in_dim > 0 && out_dim > 0, "SageConv " + name + ": dimensions must be positive, got " +
                                              std::to_string(in_dim) + " x " + std::to_string(out_dim));
  weight_ = make_parameter(name + ".weight", in_dim, out_dim, device);
  root_weight_ = make_parameter(name + ".root_weight", in_dim, out_dim, device);
  if (has_bias_) bias_ = make_parameter(name + ".bias", 1, out_dim, device);
}

Tensor SageConv::forward(const LayerInput& x, const Step& step) {
  HALO_EXPECTS(x.cols() == weight_.value.rows() && x.rows() == mean_->num_vertices(),
               "SageConv " + name_ + ": input is " + std::to_string(x.rows()) + " x " + std::to_string(x.cols()) +
                   ", expected " + std::to_string(mean_->num_vertices()) + " x " +
                   std::to_string(weight_.value.rows()));
  HALO_EXPECTS(!x.x.empty(), "SageConv " + name_ + ": the root term needs x itself, not only its aggregation");
  HALO_EXPECTS(!x.precomputed() || !input_grad(),
               "SageConv " + name_ + ": a precomputed M·x is only the first layer's input, which has no gradient");
  Tensor y;
  saved_ = step.training;
  input_ = step.training ? x : LayerInput();
  aggregated_input_ = Tensor();
  aggregated_bf16_ = kernels::Bf16Rows();
  aggregated_first_ = false;
  if (x.precomputed()) {
    y = x.aggregated.multiply(weight_.value.view());
  } else if (aggregates_first() && !x.x.streamed()) {
    Tensor mx = mean_->forward(x.x.tensor("SageConv " + name_ + " (aggregating first, in_dim < out_dim)"));
    y = Tensor::empty(mx.rows(), weight_.value.cols(), mx.device());
    kernels::gemm(mx.view(), Transpose::no, weight_.value.view(), Transpose::no, y.view());
    if (step.training && !recompute_aggregation() && keep_aggregation_bf16())
      aggregated_bf16_ = kernels::Bf16Rows::narrow(mx.view());
    else if (step.training && !recompute_aggregation())
      aggregated_input_ = std::move(mx);
    aggregated_first_ = true;
  } else {
    const Tensor h = x.x.multiply(weight_.value.view());
    y = mean_->forward(h);
  }
  x.x.multiply(root_weight_.value.view(), y.view(), 1.0f);
  finish_output(y, has_bias_ ? &bias_ : nullptr, step);
  return y;
}

Tensor SageConv::backward(Tensor grad_y, const Step& /*step*/) {
  HALO_EXPECTS(saved_, "SageConv " + name_ + ": backward needs a training forward before it");
  HALO_EXPECTS(grad_y.rows() == mean_->num_vertices() && grad_y.cols() == weight_.value.cols(),
               "SageConv " + name_ + ": gradient is " + std::to_string(grad_y.rows()) + " x " +
                   std::to_string(grad_y.cols()) + ", the output " + std::to_string(mean_->num_vertices()) + " x " +
                   std::to_string(weight_.value.cols()));
  saved_ = false;
  const std::int64_t in_dim = weight_.value.rows();
  if (has_bias_) kernels::column_sums(grad_y.view(), bias_.grad.view(), true);
  Tensor grad_x;
  if (input_.precomputed()) {
    input_.x.add_transposed_products({{grad_y.view(), root_weight_.grad.view()}});
    input_.aggregated.add_transposed_products({{grad_y.view(), weight_.grad.view()}});
  } else if (aggregated_first_) {
    input_.x.add_transposed_products({{grad_y.view(), root_weight_.grad.view()}});
    if (aggregated_input_.empty() && aggregated_bf16_.empty())  // recomputed: M·x of the same x
      aggregated_input_ = mean_->forward(input_.x.tensor("SageConv " + name_ + " (recomputing M·x)"));
    if (!aggregated_bf16_.empty())
      InputMatrix(aggregated_bf16_).add_transposed_products({{grad_y.view(), weight_.grad.view()}});
    else
      kernels::gemm(aggregated_input_.view(), Transpose::yes, grad_y.view(), Transpose::no, weight_.grad.view(), 1.0f,
                    1.0f);
    aggregated_input_ = Tensor();
    aggregated_bf16_ = kernels::Bf16Rows();
    if (input_grad()) {
      Tensor grad_mx = Tensor::empty(grad_y.rows(), in_dim, grad_y.device());
      kernels::gemm(grad_y.view(), Transpose::no, weight_.value.view(), Transpose::yes, grad_mx.view());
      grad_x = mean_->backward(grad_mx);
    }
  } else {
    const Tensor grad_h = mean_->backward(grad_y);
    // Both weight gradients multiply by x: a streamed x is read once for the two.
    input_.x.add_transposed_products({{grad_y.view(), root_weight_.grad.view()}, {grad_h.view(), weight_.grad.view()}});
    if (input_grad()) {
      grad_x = Tensor::empty(grad_y.rows(), in_dim, grad_y.device());
      kernels::gemm(grad_h.view(), Transpose::no, weight_.value.view(), Transpose::yes, grad_x.view());
    }
  }
  input_ = LayerInput();
  if (input_grad())
    kernels::gemm(grad_y.view(), Transpose::no, root_weight_.value.view(), Transpose::yes, grad_x.view(), 1.0f, 1.0f);
  return grad_x;
}

std::vector<Parameter*> SageConv::parameters() {
  if (has_bias_) return {&weight_, &root_weight_, &bias_};
  return {&weight_, &root_weight_};
}

std::int64_t SageConv::saved_bytes(std::int64_t vertices) const {
  return aggregation_saved_bytes(weight_.value.rows(), weight_.value.cols(), vertices);
}

}  // namespace halo::train
