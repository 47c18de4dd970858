// Linear layer: forward and backward through GEMMs.
#include "train/layers/linear.hpp"

#include <utility>

#include "graph/base/error.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "train/layers/init.hpp"

namespace halo::train {

using kernels::Tensor;
using kernels::Transpose;

Linear::Linear(std::int64_t in_dim, std::int64_t out_dim, bool bias, const std::string& name,
               kernels::Device device)
    : name_(name), has_bias_(bias) {
  HALO_EXPECTS(in_dim > 0 && out_dim > 0, "Linear " + name + ": dimensions must be positive, got " +
                                              std::to_string(in_dim) + " x " + std::to_string(out_dim));
  weight_ = make_parameter(name + ".weight", in_dim, out_dim, device);
  if (has_bias_) bias_ = make_parameter(name + ".bias", 1, out_dim, device);
}

Tensor Linear::forward(const Tensor& x, const Step& step) {
  HALO_EXPECTS(x.cols() == weight_.value.rows(), "Linear " + name_ + ": input has " + std::to_string(x.cols()) +
                                                     " columns, expected " + std::to_string(weight_.value.rows()));
  Tensor y = Tensor::empty(x.rows(), weight_.value.cols(), x.device());
  kernels::gemm(x.view(), Transpose::no, weight_.value.view(), Transpose::no, y.view());
  if (has_bias_) kernels::add_bias(y.view(), bias_.value.view());
  saved_ = step.training;
  input_ = step.training ? x.view() : kernels::ConstTensorView{};
  return y;
}

Tensor Linear::backward(Tensor grad_y, const Step& /*step*/) {
  HALO_EXPECTS(saved_, "Linear " + name_ + ": backward needs a training forward before it");
  HALO_EXPECTS(grad_y.rows() == input_.rows && grad_y.cols() == weight_.value.cols(),
               "Linear " + name_ + ": gradient is " + std::to_string(grad_y.rows()) + " x " +
                   std::to_string(grad_y.cols()) + ", the output " + std::to_string(input_.rows) + " x " +
                   std::to_string(weight_.value.cols()));
  saved_ = false;
  kernels::gemm(input_, Transpose::yes, grad_y.view(), Transpose::no, weight_.grad.view(), 1.0f, 1.0f);
  if (has_bias_) kernels::column_sums(grad_y.view(), bias_.grad.view(), true);
  if (!input_grad()) return Tensor();
  Tensor grad_x = Tensor::empty(grad_y.rows(), weight_.value.rows(), grad_y.device());
  kernels::gemm(grad_y.view(), Transpose::no, weight_.value.view(), Transpose::yes, grad_x.view());
  return grad_x;
}

std::vector<Parameter*> Linear::parameters() {
  if (has_bias_) return {&weight_, &bias_};
  return {&weight_};
}

std::int64_t Linear::saved_bytes(std::int64_t /*vertices*/) const { return 0; }

}  // namespace halo::train
