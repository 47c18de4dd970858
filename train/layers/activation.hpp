// The parameter-free layers between convolutions: dropout (with a mask that is a pure function of
// the run's seed, the epoch, the layer and the global vertex id), and ReLU or ELU.
#pragma once

#include <cstdint>

#include "kernels/bf16_rows.hpp"
#include "kernels/dropout.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/step.hpp"

namespace halo::train {

class Dropout {
 public:
  // Drops each entry with probability p in [0, 1); `layer` keys the mask apart from other layers'.
  Dropout(float p, std::uint32_t layer);

  // Dropout changes its input only in training with p > 0; otherwise forward is the identity.
  bool active(const Step& step) const { return step.training && p_ > 0.0f; }
  // A new tensor x · mask / (1 - p) when active, else a copy of x. The mask is keyed on
  // (step.seed, step.epoch, layer) and each row's global id (step.global_ids, or the row number
  // when empty), so it is the same on every thread count, device and partitioning. One pass.
  kernels::Tensor forward(const kernels::Tensor& x, const Step& step) const;
  // The same in place: x becomes x · mask / (1 - p) when active, and is left alone otherwise.
  void forward_in_place(kernels::Tensor& x, const Step& step) const;
  // grad · mask / (1 - p) in place (the mask recomputed, nothing stored), or grad unchanged when
  // inactive. `step` must be the forward's.
  kernels::Tensor backward(kernels::Tensor grad_y, const Step& step) const;

  float p() const { return p_; }
  // The key of the masks of `step` (its seed and epoch, this layer).
  kernels::DropoutKey key(const Step& step) const { return {step.seed, step.epoch, layer_}; }

 private:
  // y = x · mask / (1 - p) (y may be x's own tensor).
  void drop(kernels::ConstTensorView x, kernels::Tensor& y, const Step& step) const;

  float p_;
  std::uint32_t layer_;
};

// A hidden ReLU layer's epilogue in one pass (kernels::bias_relu_dropout), in place: y becomes
// relu(y + bias) (bias empty: none), then `dropout`'s output when one is given and active. Bitwise
// add_bias, Activation(relu).forward and dropout->forward_in_place in turn.
void bias_relu_dropout(kernels::Tensor& y, kernels::ConstTensorView bias, const Dropout* dropout, const Step& step);
// Their backward in one pass from the output y alone: grad · 1 / (1 - p) where y > 0, else 0 —
// bitwise dropout->backward then ReLU's, without drawing the mask (an entry is positive only
// where it was kept). `step` must be the forward's.
kernels::Tensor relu_dropout_backward(kernels::Tensor grad, kernels::ConstTensorView y, const Dropout* dropout,
                                      const Step& step);
// The same from y's bfloat16 copy (an output kept with --activation-dtype bf16).
kernels::Tensor relu_dropout_backward(kernels::Tensor grad, kernels::Bf16View y, const Dropout* dropout,
                                      const Step& step);

enum class ActivationKind { relu, elu };

// The nonlinearity between convolutions: ReLU (GCN, GraphSAGE) or ELU with alpha 1 (GAT).
class Activation {
 public:
  explicit Activation(ActivationKind kind = ActivationKind::relu) : kind_(kind) {}
  // f(x) in place, returned; in training keeps a view of the result for backward (both
  // derivatives are functions of the output), so the caller keeps it alive and unchanged until then.
  kernels::Tensor forward(kernels::Tensor x, const Step& step);
  // grad · f'(x) in place, from the kept output.
  kernels::Tensor backward(kernels::Tensor grad_y);
  // The same from a bfloat16 copy of the output (the caller's, which kept it instead: the
  // float32 output forward returned may be gone).
  kernels::Tensor backward(kernels::Tensor grad_y, kernels::Bf16View y);

 private:
  ActivationKind kind_;
  kernels::ConstTensorView output_;
  bool saved_ = false;
};

}  // namespace halo::train
