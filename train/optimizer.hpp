// Optimisers over a model's parameters: Adam, AdamW, SGD with momentum. Each parameter's
// weight_decay gives its decay group. State is exposed by name for checkpoints.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "train/layers/parameter.hpp"

namespace halo::train {

struct OptimizerConfig {
  std::string kind = "adam";  // adam, adamw, sgd
  float lr = 0.01f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float momentum = 0.9f;      // sgd
  bool nesterov = false;      // sgd
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Applies one update to every parameter from its grad.
  virtual void step(const std::vector<Parameter*>& parameters) = 0;
  // Steps taken so far.
  virtual std::int64_t steps() const = 0;
  virtual void set_steps(std::int64_t steps) = 0;
  // Named state tensors, PyTorch's names after the parameter's: "conv0.weight.exp_avg" and
  // ".exp_avg_sq" (Adam, AdamW), ".momentum_buffer" (SGD). Created, zero, on first use by step()
  // or by this call, so a checkpoint can be restored into them before the first step.
  virtual std::vector<std::pair<std::string, kernels::Tensor*>> state(const std::vector<Parameter*>& parameters) = 0;
};

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config);

}  // namespace halo::train
