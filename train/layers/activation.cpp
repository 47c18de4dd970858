// Dropout and ReLU layers over the elementwise kernels.
#include "train/layers/activation.hpp"

#include <string>
#include <utility>

#include "graph/base/error.hpp"
#include "kernels/dropout.hpp"
#include "kernels/elementwise.hpp"

namespace halo::train {

using kernels::Tensor;

namespace {

void check_global_ids(const Step& step, std::int64_t rows) {
  HALO_EXPECTS(step.global_ids.data == nullptr || step.global_ids.size == rows,
               "Dropout: step.global_ids has " + std::to_string(step.global_ids.size) + " entries for " +
                   std::to_string(rows) + " rows");
}

// step.device_global_ids when they are on the tensor's device (they hold step.global_ids).
bool ids_on(const Step& step, const kernels::Device& device) {
  return step.device_global_ids != nullptr && step.device_global_ids->device() == device;
}

}  // namespace

Dropout::Dropout(float p, std::uint32_t layer) : p_(p), layer_(layer) {
  HALO_EXPECTS(p >= 0.0f && p < 1.0f, "Dropout: p must be in [0, 1), got " + std::to_string(p));
}

Tensor Dropout::forward(const Tensor& x, const Step& step) const {
  if (!active(step)) return x.clone();
  Tensor y = Tensor::empty(x.rows(), x.cols(), x.device());
  drop(x.view(), y, step);
  return y;
}

void Dropout::forward_in_place(Tensor& x, const Step& step) const {
  if (active(step)) drop(x.view(), x, step);
}

void Dropout::drop(kernels::ConstTensorView x, Tensor& y, const Step& step) const {
  check_global_ids(step, x.rows);
  if (ids_on(step, y.device()))
    kernels::dropout_forward(x, y.view(), p_, key(step), *step.device_global_ids);
  else
    kernels::dropout_forward(x, y.view(), p_, key(step), step.global_ids);
}

Tensor Dropout::backward(Tensor grad_y, const Step& step) const {
  if (!active(step)) return grad_y;
  check_global_ids(step, grad_y.rows());
  if (ids_on(step, grad_y.device()))
    kernels::dropout_backward(grad_y.view(), grad_y.view(), p_, key(step), *step.device_global_ids);
  else
    kernels::dropout_backward(grad_y.view(), grad_y.view(), p_, key(step), step.global_ids);
  return grad_y;
}

void bias_relu_dropout(Tensor& y, kernels::ConstTensorView bias, const Dropout* dropout, const Step& step) {
  const bool drop = dropout != nullptr && dropout->active(step);
  const float p = drop ? dropout->p() : 0.0f;
  const kernels::DropoutKey key = drop ? dropout->key(step) : kernels::DropoutKey{};
  if (drop) check_global_ids(step, y.rows());
  if (drop && ids_on(step, y.device()))
    kernels::bias_relu_dropout(y.view(), bias, p, key, *step.device_global_ids);
  else
    kernels::bias_relu_dropout(y.view(), bias, p, key, drop ? step.global_ids : kernels::IndexView{});
}

namespace {

template <class View>
Tensor scaled_relu_backward(Tensor grad, View y, const Dropout* dropout, const Step& step) {
  HALO_EXPECTS(grad.rows() == y.rows && grad.cols() == y.cols,
               "relu_dropout_backward: gradient is " + std::to_string(grad.rows()) + " x " +
                   std::to_string(grad.cols()) + ", the output " + std::to_string(y.rows) + " x " +
                   std::to_string(y.cols));
  const float scale = dropout != nullptr && dropout->active(step) ? kernels::dropout_scale(dropout->p()) : 1.0f;
  kernels::relu_backward(y, grad.view(), grad.view(), scale);
  return grad;
}

}  // namespace

Tensor relu_dropout_backward(Tensor grad, kernels::ConstTensorView y, const Dropout* dropout, const Step& step) {
  return scaled_relu_backward(std::move(grad), y, dropout, step);
}

Tensor relu_dropout_backward(Tensor grad, kernels::Bf16View y, const Dropout* dropout, const Step& step) {
  return scaled_relu_backward(std::move(grad), y, dropout, step);
}

Tensor Activation::forward(Tensor x, const Step& step) {
  if (kind_ == ActivationKind::relu)
    kernels::relu_forward(x.view(), x.view());
  else
    kernels::elu_forward(x.view(), x.view());
  saved_ = step.training;
  output_ = step.training ? x.view() : kernels::ConstTensorView{};
  return x;
}

namespace {

// grad · f'(x) in place, from f's output y (float32 or bfloat16).
template <class View>
Tensor activation_backward(ActivationKind kind, Tensor grad_y, View y) {
  HALO_EXPECTS(grad_y.rows() == y.rows && grad_y.cols() == y.cols,
               "Activation: gradient is " + std::to_string(grad_y.rows()) + " x " + std::to_string(grad_y.cols()) +
                   ", the output " + std::to_string(y.rows) + " x " + std::to_string(y.cols));
  if (kind == ActivationKind::relu)
    kernels::relu_backward(y, grad_y.view(), grad_y.view());
  else
    kernels::elu_backward(y, grad_y.view(), grad_y.view());
  return grad_y;
}

}  // namespace

Tensor Activation::backward(Tensor grad_y) {
  HALO_EXPECTS(saved_, "Activation: backward needs a training forward before it");
  saved_ = false;
  const kernels::ConstTensorView y = output_;
  output_ = {};
  return activation_backward(kind_, std::move(grad_y), y);
}

Tensor Activation::backward(Tensor grad_y, kernels::Bf16View y) {
  HALO_EXPECTS(saved_, "Activation: backward needs a training forward before it");
  saved_ = false;
  output_ = {};
  return activation_backward(kind_, std::move(grad_y), y);
}

}  // namespace halo::train
