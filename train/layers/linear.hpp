// Linear: y = x · W + b, a dense layer applied to every vertex's row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/layer.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/step.hpp"

namespace halo::train {

class Linear : public Layer {
 public:
  // Parameters "<name>.weight" (in_dim x out_dim) and, with bias, "<name>.bias" (1 x out_dim),
  // all zero on `device` (see init.hpp for the initialisers).
  Linear(std::int64_t in_dim, std::int64_t out_dim, bool bias, const std::string& name,
         kernels::Device device = kernels::Device::cpu());

  // One GEMM (vertices x in_dim x out_dim) and the bias; keeps a view of x in training.
  kernels::Tensor forward(const kernels::Tensor& x, const Step& step) override;
  // dW += xᵀ · g, db += Σ rows of g, dx = g · Wᵀ: two GEMMs of the forward's size.
  kernels::Tensor backward(kernels::Tensor grad_y, const Step& step) override;
  std::vector<Parameter*> parameters() override;
  std::int64_t saved_bytes(std::int64_t vertices) const override;

  Parameter& weight() { return weight_; }
  Parameter* bias() { return has_bias_ ? &bias_ : nullptr; }

 private:
  std::string name_;
  bool has_bias_;
  Parameter weight_;
  Parameter bias_;
  kernels::ConstTensorView input_;
  bool saved_ = false;  // a training forward is waiting for its backward
};

}  // namespace halo::train
