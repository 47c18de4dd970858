// SageConv: GraphSAGE with the mean aggregator and a root weight, as PyG's SAGEConv computes it:
// y_i = (mean_{j ∈ N(i)} x_j) · W_l + x_i · W_r + b, the mean given as the Aggregation D^-1 A.
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

class SageConv : public GraphConv {
 public:
  // Parameters "<name>.weight" (W_l, neighbours, in_dim x out_dim), "<name>.root_weight" (W_r,
  // in_dim x out_dim) and, with bias, "<name>.bias" (1 x out_dim), all zero on `device`. `mean`
  // must outlive the layer.
  SageConv(Aggregation& mean, std::int64_t in_dim, std::int64_t out_dim, bool bias, const std::string& name,
           kernels::Device device = kernels::Device::cpu());

  using GraphConv::forward;
  // Aggregates the narrower side: M · (x · W_l) when out_dim < in_dim, else (M · x) · W_l, keeping
  // M · x (vertices x in_dim) for backward; keeps x either way. One SpMM, two GEMMs. With M · x
  // precomputed (x.aggregated, beside x itself for the root term), two GEMMs and no SpMM; such a
  // layer has no input gradient. A streamed x is always transformed first, whatever the widths: its
  // two GEMMs are two streaming passes (M · (x · W_l) must be complete before x · W_r is added).
  kernels::Tensor forward(const LayerInput& x, const Step& step) override;
  // dW_r += xᵀ g; dW_l += xᵀ (Mᵀ g) or (M x)ᵀ g; dx = (Mᵀ g) W_lᵀ + g W_rᵀ or Mᵀ (g W_lᵀ) + g W_rᵀ.
  // One SpMM (none when out_dim > in_dim and no input gradient, or with M · x precomputed) and up
  // to four GEMMs; a streamed x is read in one pass (both of its products at once).
  kernels::Tensor backward(kernels::Tensor grad_y, const Step& step) override;
  std::vector<Parameter*> parameters() override;
  // vertices · in_dim floats when aggregating first without recomputing (half that with
  // keep_aggregation_bf16), else 0.
  std::int64_t saved_bytes(std::int64_t vertices) const override;

  // True when forward computes (M · x) · W_l for a resident x.
  bool aggregates_first() const override { return conv_aggregates_first(weight_.value.rows(), weight_.value.cols()); }
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
  LayerInput input_;                  // x (and M · x when precomputed)
  kernels::Tensor aggregated_input_;  // M · x, when aggregating first without recomputing it
  kernels::Bf16Rows aggregated_bf16_;  // the same in bfloat16, with keep_aggregation_bf16
  bool aggregated_first_ = false;      // the last forward computed (M · x) · W_l
  bool saved_ = false;                // a training forward is waiting for its backward
};

}  // namespace halo::train
