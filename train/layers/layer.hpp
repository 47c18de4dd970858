// Layer: the interface of the trainable layers (Linear, GcnConv, SageConv, BatchNorm), each with a
// hand-written forward and backward over whole-graph activations (one row per vertex).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/tensor.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/step.hpp"

namespace halo::train {

class Layer {
 public:
  virtual ~Layer() = default;

  // y = f(x) for x of vertices x input width, on x's device. In training (step.training) the
  // layer keeps a view of x for backward: the caller keeps x alive and unchanged until then.
  virtual kernels::Tensor forward(const kernels::Tensor& x, const Step& step) = 0;

  // From grad_y = d loss / d y of the last training forward: adds d loss / d θ to every
  // parameter's grad and returns d loss / d x, or an empty tensor when the input gradient was
  // switched off (set_input_grad(false), e.g. for the first layer, whose input is the features).
  virtual kernels::Tensor backward(kernels::Tensor grad_y, const Step& step) = 0;

  virtual std::vector<Parameter*> parameters() = 0;

  // Bytes the layer itself holds from forward to backward for `vertices` rows (views of its
  // input are not counted: the caller owns those).
  virtual std::int64_t saved_bytes(std::int64_t vertices) const = 0;

  void set_input_grad(bool needed) { input_grad_ = needed; }
  bool input_grad() const { return input_grad_; }

 private:
  bool input_grad_ = true;
};

}  // namespace halo::train
