// Fused optimiser updates applied to one parameter tensor on its own device.
#pragma once

#include <cstdint>

#include "kernels/tensor.hpp"

namespace halo::kernels {

struct AdamHyper {
  float lr = 0.01f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  bool decoupled = false;  // AdamW: decay the weights directly instead of adding wd · w to the gradient
};

// One Adam/AdamW step (PyTorch's formulation); `step` counts from 1. m and v have param's shape.
void adam_step(TensorView param, ConstTensorView grad, TensorView m, TensorView v, const AdamHyper& h,
               std::int64_t step);

// Adam on selected rows only, each with its own step count (sparse updates of embedding tables):
// row rows[k] takes one step numbered steps[k] (from 1), exactly as adam_step updates a row.
// Rows must be distinct and in range (InvalidArgument otherwise).
void adam_step_rows(TensorView param, ConstTensorView grad, TensorView m, TensorView v, IndexView rows,
                    const std::int64_t* steps, const AdamHyper& h);

struct SgdHyper {
  float lr = 0.01f;
  float momentum = 0.0f;
  float weight_decay = 0.0f;
  bool nesterov = false;
};

// One SGD step with momentum (PyTorch's formulation); `step` counts from 1 (the first step
// initialises the momentum buffer to the gradient).
void sgd_step(TensorView param, ConstTensorView grad, TensorView momentum, const SgdHyper& h, std::int64_t step);

}  // namespace halo::kernels
