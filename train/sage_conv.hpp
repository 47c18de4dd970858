// SageConv: GraphSAGE with the mean aggregator and a root weight, as PyG's SAGEConv computes it:
// y_i = (mean_{j ∈ N(i)} x_j) · W_l + x_i · W_r + b, the mean given as the Aggregation D^-1 A.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/aggregation.hpp"
#include "train/layer.hpp"
#include "train/parameter.hpp"
#include "train/step.hpp"

namespace halo::train {

class SageConv : public Layer {
 public:
  // Parameters "<name>.weight" (W_l, neighbours, in_dim x out_dim), "<name>.root_weight" (W_r,
  // in_dim x out_dim) and, with bias, "<name>.bias" (1 x out_dim), all zero on `device`. `mean`
  // must outlive the layer.
  SageConv(Aggregation& mean, std::int64_t in_dim, std::int64_t out_dim, bool bias, const std::string& name,
           kernels::Device device = kernels::Device::cpu());

  // Aggregates the narrower side: M · (x · W_l) when out_dim < in_dim, else (M · x) · W_l, keeping
  // M · x (vertices x in_dim) for backward; keeps a view of x either way. One SpMM, two GEMMs.
  kernels::Tensor forward(const kernels::Tensor& x, const Step& step) override;
  // dW_r += xᵀ g; dW_l += xᵀ (Mᵀ g) or (M x)ᵀ g; dx = (Mᵀ g) W_lᵀ + g W_rᵀ or Mᵀ (g W_lᵀ) + g W_rᵀ.
  // One SpMM (none when out_dim >= in_dim and no input gradient) and up to four GEMMs.
  kernels::Tensor backward(kernels::Tensor grad_y, const Step& step) override;
  std::vector<Parameter*> parameters() override;
  // vertices · in_dim floats when aggregating first, else 0.
  std::int64_t saved_bytes(std::int64_t vertices) const override;

  bool aggregates_first() const { return weight_.value.cols() >= weight_.value.rows(); }
  Parameter& weight() { return weight_; }
  Parameter& root_weight() { return root_weight_; }
  Parameter* bias() { return has_bias_ ? &bias_ : nullptr; }

 private:
  Aggregation* mean_;
  std::string name_;
  bool has_bias_;
  Parameter weight_;
  Parameter root_weight_;
  Parameter bias_;
  kernels::ConstTensorView input_;    // x
  kernels::Tensor aggregated_input_;  // M · x, when aggregating first
  bool saved_ = false;                // a training forward is waiting for its backward
};

}  // namespace halo::train
