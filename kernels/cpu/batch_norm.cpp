// CPU batch normalisation over all rows: column statistics through reduce_rows (double,
// independent of the thread count), mean and inverse deviation per column in double, elementwise
// passes in parallel over rows.
#include <algorithm>
#include <cmath>
#include <vector>

#include "graph/base/parallel.hpp"
#include "kernels/cpu/column_reduce.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/row_loop.hpp"

namespace halo::kernels::cpu {
namespace {

// Writes the two halves of a 2 x cols double result into rows 0 and 1 of `out`.
void store_pair(const std::vector<double>& sums, std::int64_t cols, TensorView out) {
  for (std::int64_t j = 0; j < cols; ++j) {
    out.row(0)[j] = static_cast<float>(sums[static_cast<std::size_t>(j)]);
    out.row(1)[j] = static_cast<float>(sums[static_cast<std::size_t>(cols + j)]);
  }
}

}  // namespace

void batch_norm_sums(ConstTensorView x, TensorView sums) {
  const std::int64_t cols = x.cols;
  store_pair(reduce_rows(x.rows, 2 * cols,
                         [&](std::int64_t i, double* acc) {
                           const float* row = x.row(i);
                           for (std::int64_t j = 0; j < cols; ++j) {
                             const double v = row[j];
                             acc[j] += v;
                             acc[cols + j] += v * v;
                           }
                         }),
             cols, sums);
}

void batch_norm_statistics(ConstTensorView sums, double n, float eps, float momentum, TensorView stats,
                           TensorView running_mean, TensorView running_var) {
  for (std::int64_t j = 0; j < sums.cols; ++j) {
    const double mean = sums.row(0)[j] / n;
    const double var = std::max(sums.row(1)[j] / n - mean * mean, 0.0);
    stats.row(0)[j] = static_cast<float>(mean);
    stats.row(1)[j] = static_cast<float>(1.0 / std::sqrt(var + eps));
    running_mean.data[j] = static_cast<float>((1.0 - momentum) * running_mean.data[j] + momentum * mean);
    running_var.data[j] = static_cast<float>((1.0 - momentum) * running_var.data[j] + momentum * var * n / (n - 1));
  }
}

void batch_norm_running_statistics(ConstTensorView running_mean, ConstTensorView running_var, float eps,
                                   TensorView stats) {
  for (std::int64_t j = 0; j < running_mean.cols; ++j) {
    stats.row(0)[j] = running_mean.data[j];
    stats.row(1)[j] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(running_var.data[j]) + eps));
  }
}

void batch_norm_forward(ConstTensorView x, ConstTensorView stats, ConstTensorView gamma, ConstTensorView beta,
                        TensorView y) {
  const float* mean = stats.row(0);
  const float* inv_std = stats.row(1);
  for_rows(x.rows, x.cols, [&](std::int64_t i) {
    const float* in = x.row(i);
    float* out = y.row(i);
    for (std::int64_t j = 0; j < x.cols; ++j) out[j] = gamma.data[j] * ((in[j] - mean[j]) * inv_std[j]) + beta.data[j];
  });
}

void batch_norm_backward_sums(ConstTensorView x, ConstTensorView stats, ConstTensorView grad_y, TensorView reduce) {
  const std::int64_t cols = x.cols;
  const float* mean = stats.row(0);
  const float* inv_std = stats.row(1);
  store_pair(reduce_rows(x.rows, 2 * cols,
                         [&](std::int64_t i, double* acc) {
                           const float* in = x.row(i);
                           const float* g = grad_y.row(i);
                           for (std::int64_t j = 0; j < cols; ++j) {
                             const float x_hat = (in[j] - mean[j]) * inv_std[j];
                             acc[j] += g[j];
                             acc[cols + j] += static_cast<double>(g[j]) * x_hat;
                           }
                         }),
             cols, reduce);
}

void batch_norm_backward(ConstTensorView x, ConstTensorView stats, ConstTensorView gamma, ConstTensorView grad_y,
                         ConstTensorView reduce, double n, TensorView grad_x, TensorView grad_gamma,
                         TensorView grad_beta) {
  const std::int64_t cols = x.cols;
  const float* mean = stats.row(0);
  const float* inv_std = stats.row(1);
  // The column means of the two reductions, divided once instead of once per row.
  std::vector<float> mean_g(static_cast<std::size_t>(cols)), mean_gx(static_cast<std::size_t>(cols));
  for (std::int64_t j = 0; j < cols; ++j) {
    mean_g[static_cast<std::size_t>(j)] = static_cast<float>(reduce.row(0)[j] / n);
    mean_gx[static_cast<std::size_t>(j)] = static_cast<float>(reduce.row(1)[j] / n);
  }
  for_rows(x.rows, cols, [&](std::int64_t i) {
    const float* in = x.row(i);
    const float* g = grad_y.row(i);
    float* gx = grad_x.row(i);
    for (std::int64_t j = 0; j < cols; ++j) {
      const auto c = static_cast<std::size_t>(j);
      const float x_hat = (in[j] - mean[j]) * inv_std[j];
      gx[j] = gamma.data[j] * inv_std[j] * (g[j] - mean_g[c] - x_hat * mean_gx[c]);
    }
  });
  for (std::int64_t j = 0; j < cols; ++j) {
    grad_gamma.data[j] += reduce.row(1)[j];
    grad_beta.data[j] += reduce.row(0)[j];
  }
}

}  // namespace halo::kernels::cpu
