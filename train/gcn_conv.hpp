// GcnConv: Kipf & Welling's graph convolution, y = Â · x · W + b, with Â the GCN-normalised
// adjacency D^-1/2 (A + I) D^-1/2 given as an Aggregation.
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

class GcnConv : public Layer {
 public:
  // Parameters "<name>.weight" (in_dim x out_dim) and, with bias, "<name>.bias" (1 x out_dim), all
  // zero on `device`. `aggregation` (Â) must outlive the layer.
  GcnConv(Aggregation& aggregation, std::int64_t in_dim, std::int64_t out_dim, bool bias, const std::string& name,
          kernels::Device device = kernels::Device::cpu());

  // Aggregates the narrower side, so the SpMM (and, distributed, the halo exchange) carries
  // min(in_dim, out_dim) columns: Â · (x · W) when out_dim < in_dim, else (Â · x) · W, keeping
  // Â · x (vertices x in_dim) for backward. One SpMM and one GEMM.
  kernels::Tensor forward(const kernels::Tensor& x, const Step& step) override;
  // The adjoint of the same order: dW += xᵀ · (Âᵀ g) and dx = (Âᵀ g) · Wᵀ, or dW += (Â x)ᵀ · g and
  // dx = Âᵀ · (g · Wᵀ). One SpMM (none when out_dim >= in_dim and no input gradient) and two GEMMs.
  kernels::Tensor backward(kernels::Tensor grad_y, const Step& step) override;
  std::vector<Parameter*> parameters() override;
  // vertices · in_dim floats when aggregating first, else 0.
  std::int64_t saved_bytes(std::int64_t vertices) const override;

  // True when forward computes (Â · x) · W.
  bool aggregates_first() const { return weight_.value.cols() >= weight_.value.rows(); }
  Parameter& weight() { return weight_; }
  Parameter* bias() { return has_bias_ ? &bias_ : nullptr; }

 private:
  Aggregation* aggregation_;
  std::string name_;
  bool has_bias_;
  Parameter weight_;
  Parameter bias_;
  kernels::ConstTensorView input_;    // x, when transforming first
  kernels::Tensor aggregated_input_;  // Â · x, when aggregating first
  bool saved_ = false;                // a training forward is waiting for its backward
};

}  // namespace halo::train
