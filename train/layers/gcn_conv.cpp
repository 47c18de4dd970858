// GcnConv: forward and backward, ordered so the aggregation carries the narrower width.
#include "train/layers/gcn_conv.hpp"

#include <utility>

#include "graph/base/error.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "train/layers/init.hpp"

namespace halo::train {

using kernels::Tensor;
using kernels::Transpose;

GcnConv::GcnConv(Aggregation& aggregation, std::int64_t in_dim, std::int64_t out_dim, bool bias,
                 const std::string& name, kernels::Device device)
    : aggregation_(&aggregation), name_(name), has_bias_(bias) {
  HALO_EXPECTS(in_dim > 0 && out_dim > 0, "GcnConv " + name + ": dimensions must be positive, got " +
                                              std::to_string(in_dim) + " x " + std::to_string(out_dim));
  weight_ = make_parameter(name + ".weight", in_dim, out_dim, device);
  if (has_bias_) bias_ = make_parameter(name + ".bias", 1, out_dim, device);
}

Tensor GcnConv::forward(const LayerInput& x, const Step& step) {
  HALO_EXPECTS(x.cols() == weight_.value.rows() && x.rows() == aggregation_->num_vertices(),
               "GcnConv " + name_ + ": input is " + std::to_string(x.rows()) + " x " + std::to_string(x.cols()) +
                   ", expected " + std::to_string(aggregation_->num_vertices()) + " x " +
                   std::to_string(weight_.value.rows()));
  HALO_EXPECTS(!x.precomputed() || !input_grad(),
               "GcnConv " + name_ + ": a precomputed Â·x is only the first layer's input, which has no gradient");
  Tensor y;
  saved_ = step.training;
  input_ = LayerInput();
  aggregated_input_ = Tensor();
  aggregated_bf16_ = kernels::Bf16Rows();
  aggregated_first_ = false;
  if (x.precomputed()) {
    // (Â · x) · W = Â · (x · W): with Â · x at hand, either order is this one GEMM.
    y = x.aggregated.multiply(weight_.value.view());
    if (step.training) input_ = x;
  } else if (aggregates_first() && !x.x.streamed()) {
    Tensor ax = aggregation_->forward(x.x.tensor("GcnConv " + name_ + " (aggregating first, in_dim < out_dim)"));
    y = Tensor::empty(ax.rows(), weight_.value.cols(), ax.device());
    kernels::gemm(ax.view(), Transpose::no, weight_.value.view(), Transpose::no, y.view());
    if (step.training && recompute_aggregation())
      input_ = x;
    else if (step.training && keep_aggregation_bf16())
      aggregated_bf16_ = kernels::Bf16Rows::narrow(ax.view());
    else if (step.training)
      aggregated_input_ = std::move(ax);
    aggregated_first_ = true;
  } else {
    const Tensor h = x.x.multiply(weight_.value.view());
    y = aggregation_->forward(h);
    if (step.training) input_ = x;
  }
  finish_output(y, has_bias_ ? &bias_ : nullptr, step);
  return y;
}

Tensor GcnConv::backward(Tensor grad_y, const Step& /*step*/) {
  HALO_EXPECTS(saved_, "GcnConv " + name_ + ": backward needs a training forward before it");
  HALO_EXPECTS(grad_y.rows() == aggregation_->num_vertices() && grad_y.cols() == weight_.value.cols(),
               "GcnConv " + name_ + ": gradient is " + std::to_string(grad_y.rows()) + " x " +
                   std::to_string(grad_y.cols()) + ", the output " + std::to_string(aggregation_->num_vertices()) +
                   " x " + std::to_string(weight_.value.cols()));
  saved_ = false;
  if (has_bias_) kernels::column_sums(grad_y.view(), bias_.grad.view(), true);
  Tensor grad_x;
  if (input_.precomputed()) {
    input_.aggregated.add_transposed_products({{grad_y.view(), weight_.grad.view()}});
    input_ = LayerInput();
  } else if (aggregated_first_) {
    if (aggregated_input_.empty() && aggregated_bf16_.empty())  // recomputed: Â·x of the same x
      aggregated_input_ = aggregation_->forward(input_.x.tensor("GcnConv " + name_ + " (recomputing Â·x)"));
    input_ = LayerInput();
    if (!aggregated_bf16_.empty())
      InputMatrix(aggregated_bf16_).add_transposed_products({{grad_y.view(), weight_.grad.view()}});
    else
      kernels::gemm(aggregated_input_.view(), Transpose::yes, grad_y.view(), Transpose::no, weight_.grad.view(), 1.0f,
                    1.0f);
    aggregated_input_ = Tensor();
    aggregated_bf16_ = kernels::Bf16Rows();
    if (!input_grad()) return grad_x;
    Tensor grad_ax = Tensor::empty(grad_y.rows(), weight_.value.rows(), grad_y.device());
    kernels::gemm(grad_y.view(), Transpose::no, weight_.value.view(), Transpose::yes, grad_ax.view());
    grad_y = Tensor();
    grad_x = aggregation_->backward(grad_ax);
  } else {
    const Tensor grad_h = aggregation_->backward(grad_y);
    grad_y = Tensor();
    input_.x.add_transposed_products({{grad_h.view(), weight_.grad.view()}});
    input_ = LayerInput();
    if (!input_grad()) return grad_x;
    grad_x = Tensor::empty(grad_h.rows(), weight_.value.rows(), grad_h.device());
    kernels::gemm(grad_h.view(), Transpose::no, weight_.value.view(), Transpose::yes, grad_x.view());
  }
  return grad_x;
}

std::vector<Parameter*> GcnConv::parameters() {
  if (has_bias_) return {&weight_, &bias_};
  return {&weight_};
}

std::int64_t GcnConv::saved_bytes(std::int64_t vertices) const {
  return aggregation_saved_bytes(weight_.value.rows(), weight_.value.cols(), vertices);
}

}  // namespace halo::train
