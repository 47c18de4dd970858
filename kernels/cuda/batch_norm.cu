// CUDA batch normalisation over all rows, twin of kernels/cpu/batch_norm.cpp: column statistics
// through the deterministic column sums of kernel_util.cuh (double), the mean and inverse
// deviation per column in double (the CPU's bits), elementwise passes over the window.
#include <cstdint>

#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"

namespace halo::kernels::cuda {
namespace {

struct SumAndSquareTerm {
  const float* x;
  std::int64_t stride;
  __device__ void operator()(std::int64_t i, std::int64_t j, double* acc) const {
    const double v = x[i * stride + j];
    acc[0] += v;
    acc[1] += v * v;
  }
};

struct BackwardTerm {
  const float* x;
  std::int64_t x_stride;
  const float* g;
  std::int64_t g_stride;
  const float* mean;
  const float* inv_std;
  __device__ void operator()(std::int64_t i, std::int64_t j, double* acc) const {
    const float x_hat = (x[i * x_stride + j] - mean[j]) * inv_std[j];
    const float gv = g[i * g_stride + j];
    acc[0] += gv;
    acc[1] += static_cast<double>(gv) * x_hat;
  }
};

// Rows 0 and 1 of a 2 x cols float output from the two halves of a 2 x cols double total.
__global__ void store_pair(const double* total, std::int64_t cols, float* out, std::int64_t out_stride) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  out[j] = static_cast<float>(total[j]);
  out[out_stride + j] = static_cast<float>(total[cols + j]);
}

// The twin of cpu::batch_norm_statistics, one thread per column. The operations are spelled as
// round-to-nearest intrinsics so that nvcc does not fuse them into FMAs: the statistics then have
// the CPU's bits.
__global__ void statistics(const float* sums, std::int64_t sums_stride, double n, double eps, double momentum,
                           std::int64_t cols, float* stats, std::int64_t stats_stride, float* running_mean,
                           float* running_var) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const double mean = __ddiv_rn(sums[j], n);
  const double var = fmax(__dsub_rn(__ddiv_rn(sums[sums_stride + j], n), __dmul_rn(mean, mean)), 0.0);
  stats[j] = static_cast<float>(mean);
  stats[stats_stride + j] = static_cast<float>(__ddiv_rn(1.0, __dsqrt_rn(__dadd_rn(var, eps))));
  const double keep = __dsub_rn(1.0, momentum);
  running_mean[j] = static_cast<float>(__dadd_rn(__dmul_rn(keep, running_mean[j]), __dmul_rn(momentum, mean)));
  const double unbiased = __ddiv_rn(__dmul_rn(__dmul_rn(momentum, var), n), __dsub_rn(n, 1.0));
  running_var[j] = static_cast<float>(__dadd_rn(__dmul_rn(keep, running_var[j]), unbiased));
}

__global__ void running_statistics(const float* running_mean, const float* running_var, double eps, std::int64_t cols,
                                   float* stats, std::int64_t stats_stride) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  stats[j] = running_mean[j];
  stats[stats_stride + j] =
      static_cast<float>(__ddiv_rn(1.0, __dsqrt_rn(__dadd_rn(static_cast<double>(running_var[j]), eps))));
}

struct Forward {
  const float* x;
  std::int64_t x_stride;
  const float* mean;
  const float* inv_std;
  const float* gamma;
  const float* beta;
  float* y;
  std::int64_t y_stride;
  __device__ void operator()(std::int64_t i, std::int64_t j) const {
    y[i * y_stride + j] = gamma[j] * ((x[i * x_stride + j] - mean[j]) * inv_std[j]) + beta[j];
  }
};

// The column means of the two backward reductions, divided in double and rounded once, as the
// CPU twin does; then grad_gamma += reduce[1], grad_beta += reduce[0].
__global__ void backward_columns(const float* reduce, std::int64_t reduce_stride, double n, std::int64_t cols,
                                 float* mean_g, float* mean_gx, float* grad_gamma, float* grad_beta) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const float r0 = reduce[j];
  const float r1 = reduce[reduce_stride + j];
  mean_g[j] = static_cast<float>(r0 / n);
  mean_gx[j] = static_cast<float>(r1 / n);
  grad_gamma[j] += r1;
  grad_beta[j] += r0;
}

struct Backward {
  const float* x;
  std::int64_t x_stride;
  const float* g;
  std::int64_t g_stride;
  const float* mean;
  const float* inv_std;
  const float* gamma;
  const float* mean_g;
  const float* mean_gx;
  float* gx;
  std::int64_t gx_stride;
  __device__ void operator()(std::int64_t i, std::int64_t j) const {
    const float x_hat = (x[i * x_stride + j] - mean[j]) * inv_std[j];
    gx[i * gx_stride + j] = gamma[j] * inv_std[j] * (g[i * g_stride + j] - mean_g[j] - x_hat * mean_gx[j]);
  }
};

// The row stride of a 2 x cols operand (a one-row view may carry any stride; these have two).
std::int64_t second_row(const ConstTensorView& v) { return v.stride; }

}  // namespace

void batch_norm_sums(ConstTensorView x, TensorView sums) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  if (x.cols == 0) return;
  const DeviceBuffer<double> total = column_totals<2>(d, x.rows, x.cols, SumAndSquareTerm{x.data, x.stride});
  store_pair<<<blocks_for(x.cols), threads_per_block, 0, stream_of(d)>>>(total.data(), x.cols, sums.data, sums.stride);
  HALO_CUDA_CHECK_LAUNCH();
}

void batch_norm_statistics(ConstTensorView sums, double n, float eps, float momentum, TensorView stats,
                           TensorView running_mean, TensorView running_var) {
  const int d = sums.device.index;
  ScopedDevice scoped(d);
  if (sums.cols == 0) return;
  statistics<<<blocks_for(sums.cols), threads_per_block, 0, stream_of(d)>>>(
      sums.data, second_row(sums), n, eps, momentum, sums.cols, stats.data, stats.stride, running_mean.data,
      running_var.data);
  HALO_CUDA_CHECK_LAUNCH();
}

void batch_norm_running_statistics(ConstTensorView running_mean, ConstTensorView running_var, float eps,
                                   TensorView stats) {
  const int d = running_mean.device.index;
  ScopedDevice scoped(d);
  if (running_mean.cols == 0) return;
  running_statistics<<<blocks_for(running_mean.cols), threads_per_block, 0, stream_of(d)>>>(
      running_mean.data, running_var.data, eps, running_mean.cols, stats.data, stats.stride);
  HALO_CUDA_CHECK_LAUNCH();
}

void batch_norm_forward(ConstTensorView x, ConstTensorView stats, ConstTensorView gamma, ConstTensorView beta,
                        TensorView y) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(
      d, x.rows, x.cols,
      Forward{x.data, x.stride, stats.data, stats.data + second_row(stats), gamma.data, beta.data, y.data, y.stride});
}

void batch_norm_backward_sums(ConstTensorView x, ConstTensorView stats, ConstTensorView grad_y, TensorView reduce) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  if (x.cols == 0) return;
  const DeviceBuffer<double> total = column_totals<2>(
      d, x.rows, x.cols,
      BackwardTerm{x.data, x.stride, grad_y.data, grad_y.stride, stats.data, stats.data + second_row(stats)});
  store_pair<<<blocks_for(x.cols), threads_per_block, 0, stream_of(d)>>>(total.data(), x.cols, reduce.data,
                                                                         reduce.stride);
  HALO_CUDA_CHECK_LAUNCH();
}

void batch_norm_backward(ConstTensorView x, ConstTensorView stats, ConstTensorView gamma, ConstTensorView grad_y,
                         ConstTensorView reduce, double n, TensorView grad_x, TensorView grad_gamma,
                         TensorView grad_beta) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  if (x.cols == 0) return;
  DeviceBuffer<float> means(d, 2 * x.cols);
  backward_columns<<<blocks_for(x.cols), threads_per_block, 0, stream_of(d)>>>(
      reduce.data, second_row(reduce), n, x.cols, means.data(), means.data() + x.cols, grad_gamma.data, grad_beta.data);
  HALO_CUDA_CHECK_LAUNCH();
  launch_elementwise(d, x.rows, x.cols,
                     Backward{x.data, x.stride, grad_y.data, grad_y.stride, stats.data, stats.data + second_row(stats),
                              gamma.data, means.data(), means.data() + x.cols, grad_x.data, grad_x.stride});
}

}  // namespace halo::kernels::cuda
