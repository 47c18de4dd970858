// Batch normalisation over all rows (full-batch statistics). The statistics are returned as sums
// so that ranks holding parts of the graph can all-reduce them before normalising.
#pragma once

#include "kernels/tensor.hpp"

namespace halo::kernels {

// sums[0, j] = Σ_i x[i, j], sums[1, j] = Σ_i x[i, j]² (2 x cols, float accumulated in double).
void batch_norm_sums(ConstTensorView x, TensorView sums);

// Training statistics from the column sums of all n rows (sums: 2 x cols, batch_norm_sums'
// layout, all-reduced when distributed; n > 1): in double, mean = sums[0] / n, the biased
// var = max(sums[1] / n - mean², 0) (rounding can make it slightly negative), stats[0] = mean,
// stats[1] = 1 / sqrt(var + eps); the running statistics (1 x cols) move by `momentum` towards
// mean and the unbiased var · n / (n - 1), as torch.nn.BatchNorm1d keeps them. O(cols), on the
// operands' device, deterministic.
void batch_norm_statistics(ConstTensorView sums, double n, float eps, float momentum, TensorView stats,
                           TensorView running_mean, TensorView running_var);

// Evaluation statistics: stats[0] = running_mean, stats[1] = 1 / sqrt(running_var + eps) (in
// double). O(cols), on the operands' device, deterministic.
void batch_norm_running_statistics(ConstTensorView running_mean, ConstTensorView running_var, float eps,
                                   TensorView stats);

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
