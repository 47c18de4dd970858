// BatchNorm: batch normalisation of every column over all vertices (full-batch statistics), as
// torch.nn.BatchNorm1d computes it on the stacked vertex rows: batch statistics in training,
// running statistics (momentum 0.1, unbiased variance) in evaluation.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/dist/communicator.hpp"
#include "train/layers/layer.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/step.hpp"

namespace halo::train {

class BatchNorm : public Layer {
 public:
  // Parameters "<name>.gamma" (ones) and "<name>.beta" (zeros), 1 x features, and the buffers
  // "<name>.running_mean" (zeros) and "<name>.running_var" (ones), all on `device`. `comm`: the
  // ranks that hold the other rows (each rank one part of the graph), over which the statistics
  // are all-reduced so they are those of all rows; null for one process.
  BatchNorm(std::int64_t features, const std::string& name, kernels::Device device = kernels::Device::cpu(),
            dist::Communicator* comm = nullptr, float eps = 1e-5f, float momentum = 0.1f);

  // Training: column sums of x and x² (one pass), all-reduced, then mean and biased variance in
  // double and the running statistics updated (kernels::batch_norm_statistics), and a second pass
  // to normalise; keeps a view of x. Evaluation: one pass with the running statistics. Everything
  // stays on x's device: with more than one rank the sums are all-reduced in place when the
  // communicator moves buffers on that device (NCCL for GPU tensors, MPI for CPU ones), through the
  // host otherwise; only the row count (a host integer) is all-reduced apart. Deterministic.
  kernels::Tensor forward(const kernels::Tensor& x, const Step& step) override;
  // Two passes (Σ g and Σ g · x_hat, all-reduced, then grad_x); dgamma += Σ g · x_hat and
  // dbeta += Σ g over this rank's rows (the gradient all-reduce completes them).
  kernels::Tensor backward(kernels::Tensor grad_y, const Step& step) override;
  std::vector<Parameter*> parameters() override;
  // The statistics only (2 x features floats); x is the caller's.
  std::int64_t saved_bytes(std::int64_t vertices) const override;

  // The running statistics, for evaluation and checkpoints.
  std::vector<std::pair<std::string, kernels::Tensor*>> buffers();
  Parameter& gamma() { return gamma_; }
  Parameter& beta() { return beta_; }

 private:
  // True with a communicator of more than one rank.
  bool distributed() const;
  // Sums (2 x features) over every rank holding part of the graph, in place.
  void all_reduce_sums(kernels::Tensor& sums);

  std::string name_;
  float eps_;
  float momentum_;
  dist::Communicator* comm_;
  Parameter gamma_;
  Parameter beta_;
  kernels::Tensor running_mean_;
  kernels::Tensor running_var_;
  kernels::Tensor stats_;  // 2 x features: mean, 1 / sqrt(var + eps) of the last training forward
  kernels::ConstTensorView input_;
  double rows_ = 0;        // rows over all processes in the last training forward
  bool saved_ = false;     // a training forward is waiting for its backward
};

}  // namespace halo::train
