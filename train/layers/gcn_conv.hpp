// GcnConv: Kipf & Welling's graph convolution, y = Â · x · W + b, with Â the GCN-normalised
// adjacency D^-1/2 (A + I) D^-1/2 given as an Aggregation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/aggregation.hpp"
#include "train/layers/layer_input.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/step.hpp"

namespace halo::train {

class GcnConv : public GraphConv {
 public:
  // Parameters "<name>.weight" (in_dim x out_dim) and, with bias, "<name>.bias" (1 x out_dim), all
  // zero on `device`. `aggregation` (Â) must outlive the layer.
  GcnConv(Aggregation& aggregation, std::int64_t in_dim, std::int64_t out_dim, bool bias, const std::string& name,
          kernels::Device device = kernels::Device::cpu());

  using GraphConv::forward;
  // Aggregates the narrower side, so the SpMM (and, distributed, the halo exchange) carries
  // min(in_dim, out_dim) columns: Â · (x · W) when out_dim < in_dim, else (Â · x) · W, keeping
  // Â · x (vertices x in_dim) for backward. One SpMM and one GEMM. With Â · x precomputed
  // (x.aggregated), one GEMM and no SpMM, in either order; such a layer has no input gradient.
  // A streamed x is always transformed first, whatever the widths: its GEMM goes chunk by chunk,
  // and the SpMM then carries out_dim columns.
  kernels::Tensor forward(const LayerInput& x, const Step& step) override;
  // The adjoint of the same order: dW += xᵀ · (Âᵀ g) and dx = (Âᵀ g) · Wᵀ, or dW += (Â x)ᵀ · g and
  // dx = Âᵀ · (g · Wᵀ). One SpMM (none when out_dim > in_dim and no input gradient, or with Â · x
  // precomputed) and two GEMMs (one streaming pass for a streamed x).
  kernels::Tensor backward(kernels::Tensor grad_y, const Step& step) override;
  std::vector<Parameter*> parameters() override;
  // vertices · in_dim floats when aggregating first without recomputing (half that with
  // keep_aggregation_bf16), else 0.
  std::int64_t saved_bytes(std::int64_t vertices) const override;

  // True when forward computes (Â · x) · W for a resident x.
  bool aggregates_first() const override { return conv_aggregates_first(weight_.value.rows(), weight_.value.cols()); }
  Parameter& weight() { return weight_; }
  Parameter* bias() { return has_bias_ ? &bias_ : nullptr; }

 private:
  Aggregation* aggregation_;
  std::string name_;
  bool has_bias_;
  Parameter weight_;
  Parameter bias_;
  LayerInput input_;                  // x, when transforming first, recomputing Â · x or with it precomputed
  kernels::Tensor aggregated_input_;  // Â · x, when aggregating first without recomputing it
  kernels::Bf16Rows aggregated_bf16_;  // the same in bfloat16, with keep_aggregation_bf16
  bool aggregated_first_ = false;      // the last forward computed (Â · x) · W
  bool saved_ = false;                // a training forward is waiting for its backward
};

}  // namespace halo::train
