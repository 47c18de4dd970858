// Batch normalisation over all rows (full-batch statistics). The statistics are returned as sums
// so that ranks holding parts of the graph can all-reduce them before normalising.
#pragma once

#include "kernels/tensor.hpp"

namespace halo::kernels {

// sums[0, j] = Σ_i x[i, j], sums[1, j] = Σ_i x[i, j]² (2 x cols, float accumulated in double).
void batch_norm_sums(ConstTensorView x, TensorView sums);

// With mean[j] and inv_std[j] = 1 / sqrt(var[j] + eps) in stats (2 x cols: row 0 mean, row 1
// inv_std): x_hat = (x - mean) · inv_std, y = gamma · x_hat + beta (gamma, beta: 1 x cols).
void batch_norm_forward(ConstTensorView x, ConstTensorView stats, ConstTensorView gamma, ConstTensorView beta,
                        TensorView y);

// Given grad_y, writes partial sums for the backward pass: reduce[0, j] = Σ_i grad_y[i, j],
// reduce[1, j] = Σ_i grad_y[i, j] · x_hat[i, j] (2 x cols; all-reducible).
void batch_norm_backward_sums(ConstTensorView x, ConstTensorView stats, ConstTensorView grad_y, TensorView reduce);

// grad_x = gamma · inv_std · (grad_y - reduce[0]/n - x_hat · reduce[1]/n), n = total rows (over
// all ranks); grad_gamma += reduce[1], grad_beta += reduce[0] (both 1 x cols).
void batch_norm_backward(ConstTensorView x, ConstTensorView stats, ConstTensorView gamma, ConstTensorView grad_y,
                         ConstTensorView reduce, double n, TensorView grad_x, TensorView grad_gamma,
                         TensorView grad_beta);

}  // namespace halo::kernels
