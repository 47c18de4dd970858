// Dropout whose mask is a pure function of (seed, epoch, layer, global vertex id, column): the
// same on every thread count, every device, and every partitioning of the graph. The mask is
// never stored; backward recomputes it.
#pragma once

#include <cstdint>

#include "kernels/device_index.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels {

struct DropoutKey {
  std::uint64_t seed = 0;
  std::uint64_t epoch = 0;
  std::uint32_t layer = 0;
};

// The factor 1 / (1 - p) kept values are multiplied by, rounded to float once; every twin uses it.
inline float dropout_scale(float p) { return 1.0f / (1.0f - p); }

// y = x · mask / (1 - p), mask[i, j] = 1 with probability 1 - p, decided by Philox on
// (key, global_id(i), j) where global_id(i) = global_ids[i] (or i when global_ids.data is null).
// p in [0, 1). y may alias x. The exact mapping to Philox is documented in kernels/cpu/dropout.cpp
// (the CUDA twin must reproduce it); p is resolved to 2^-16. Cost: one Philox block per 8 values.
void dropout_forward(ConstTensorView x, TensorView y, float p, DropoutKey key, IndexView global_ids);
// grad_x = grad_y · mask / (1 - p) with the same mask. grad_x may alias grad_y.
void dropout_backward(ConstTensorView grad_y, TensorView grad_x, float p, DropoutKey key, IndexView global_ids);
// The same with the ids built once on the input's device (an empty index: the row numbers), so a
// GPU call uploads nothing. global_ids.size() is 0 or x.rows.
void dropout_forward(ConstTensorView x, TensorView y, float p, DropoutKey key, const DeviceIndex& global_ids);
void dropout_backward(ConstTensorView grad_y, TensorView grad_x, float p, DropoutKey key,
                      const DeviceIndex& global_ids);

// The epilogue of a hidden ReLU layer in one pass, in place: y = dropout(relu(y + bias)), bitwise
// add_bias, relu_forward and dropout_forward in turn (the same add, select, product and mask).
// bias: 1 x y.cols, or empty (data null) for none; p = 0: relu(y + bias) alone. The mask's
// backward after it needs no mask: where the output is positive the entry was kept, so
// relu_backward(y, grad, grad, dropout_scale(p)) is both backward passes, bitwise.
void bias_relu_dropout(TensorView y, ConstTensorView bias, float p, DropoutKey key, IndexView global_ids);
void bias_relu_dropout(TensorView y, ConstTensorView bias, float p, DropoutKey key, const DeviceIndex& global_ids);

}  // namespace halo::kernels
