// A trainable tensor with its gradient and its weight-decay group.
#pragma once

#include <string>

#include "kernels/tensor.hpp"

namespace halo::train {

struct Parameter {
  std::string name;        // unique within a model, e.g. "conv0.weight"; used by checkpoints
  kernels::Tensor value;
  kernels::Tensor grad;    // same shape as value; accumulated by backward, cleared by zero_grad
  float weight_decay = 0;  // this parameter's L2 / decoupled decay coefficient
};

}  // namespace halo::train
