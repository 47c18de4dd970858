// Batch-norm dispatch: checks the operands, times the call, runs the CPU or CUDA implementation.
#include "kernels/batch_norm.hpp"

#include <string>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {

void batch_norm_sums(ConstTensorView x, TensorView sums) {
  detail::check_view("batch_norm_sums", "x", x);
  detail::check_shape("batch_norm_sums", "sums", sums, 2, x.cols);
  detail::check_device("batch_norm_sums", "sums", sums, x.device);
  HALO_EXPECTS(!detail::overlaps(x, sums), "sums may not overlap x");
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::batch_norm_sums(x, sums);
    return;
  }
  cpu::batch_norm_sums(x, sums);
}

void batch_norm_statistics(ConstTensorView sums, double n, float eps, float momentum, TensorView stats,
                           TensorView running_mean, TensorView running_var) {
  detail::check_view("batch_norm_statistics", "sums", sums);
  HALO_EXPECTS(sums.rows == 2, "batch_norm_statistics: sums must have 2 rows, got " + std::to_string(sums.rows));
  detail::check_shape("batch_norm_statistics", "stats", stats, 2, sums.cols);
  detail::check_shape("batch_norm_statistics", "running_mean", running_mean, 1, sums.cols);
  detail::check_shape("batch_norm_statistics", "running_var", running_var, 1, sums.cols);
  for (const ConstTensorView& v : {ConstTensorView(stats), ConstTensorView(running_mean), ConstTensorView(running_var)})
    detail::check_device("batch_norm_statistics", "every operand", v, sums.device);
  HALO_EXPECTS(n > 1, "batch_norm_statistics: needs more than one row, got n = " + std::to_string(n));
  HALO_EXPECTS(eps > 0 && momentum >= 0 && momentum <= 1,
               "batch_norm_statistics: needs eps > 0 and momentum in [0, 1], got eps " + std::to_string(eps) +
                   ", momentum " + std::to_string(momentum));
  HALO_EXPECTS(!detail::overlaps(stats, sums) && !detail::overlaps(stats, running_mean) &&
                   !detail::overlaps(stats, running_var) && !detail::overlaps(running_mean, running_var) &&
                   !detail::overlaps(running_mean, sums) && !detail::overlaps(running_var, sums),
               "batch_norm_statistics: the operands may not overlap");
  ScopedKernelTimer timer(KernelFamily::other, sums.device);
  if (sums.device.is_cuda()) {
    require_device(sums.device);
    cuda::batch_norm_statistics(sums, n, eps, momentum, stats, running_mean, running_var);
    return;
  }
  cpu::batch_norm_statistics(sums, n, eps, momentum, stats, running_mean, running_var);
}

void batch_norm_running_statistics(ConstTensorView running_mean, ConstTensorView running_var, float eps,
                                   TensorView stats) {
  detail::check_view("batch_norm_running_statistics", "running_mean", running_mean);
  HALO_EXPECTS(running_mean.rows == 1, "batch_norm_running_statistics: running_mean must have 1 row, got " +
                                           std::to_string(running_mean.rows));
  detail::check_shape("batch_norm_running_statistics", "running_var", running_var, 1, running_mean.cols);
  detail::check_shape("batch_norm_running_statistics", "stats", stats, 2, running_mean.cols);
  for (const ConstTensorView& v : {running_var, ConstTensorView(stats)})
    detail::check_device("batch_norm_running_statistics", "every operand", v, running_mean.device);
  HALO_EXPECTS(eps > 0, "batch_norm_running_statistics: needs eps > 0, got " + std::to_string(eps));
  HALO_EXPECTS(!detail::overlaps(stats, running_mean) && !detail::overlaps(stats, running_var),
               "batch_norm_running_statistics: stats may not overlap the running statistics");
  ScopedKernelTimer timer(KernelFamily::other, running_mean.device);
  if (running_mean.device.is_cuda()) {
    require_device(running_mean.device);
    cuda::batch_norm_running_statistics(running_mean, running_var, eps, stats);
    return;
  }
  cpu::batch_norm_running_statistics(running_mean, running_var, eps, stats);
}

void batch_norm_forward(ConstTensorView x, ConstTensorView stats, ConstTensorView gamma, ConstTensorView beta,
                        TensorView y) {
  detail::check_view("batch_norm_forward", "x", x);
  detail::check_shape("batch_norm_forward", "stats", stats, 2, x.cols);
  detail::check_shape("batch_norm_forward", "gamma", gamma, 1, x.cols);
  detail::check_shape("batch_norm_forward", "beta", beta, 1, x.cols);
  detail::check_shape("batch_norm_forward", "y", y, x.rows, x.cols);
  for (const ConstTensorView& v : {stats, gamma, beta, ConstTensorView(y)})
    detail::check_device("batch_norm_forward", "every operand", v, x.device);
  HALO_EXPECTS(detail::same_or_disjoint(x, y), "y must be x itself or not overlap it");
  HALO_EXPECTS(!detail::overlaps(y, stats) && !detail::overlaps(y, gamma) && !detail::overlaps(y, beta),
               "y may not overlap stats, gamma or beta");
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::batch_norm_forward(x, stats, gamma, beta, y);
    return;
  }
  cpu::batch_norm_forward(x, stats, gamma, beta, y);
}

void batch_norm_backward_sums(ConstTensorView x, ConstTensorView stats, ConstTensorView grad_y, TensorView reduce) {
  detail::check_view("batch_norm_backward_sums", "x", x);
  detail::check_shape("batch_norm_backward_sums", "stats", stats, 2, x.cols);
  detail::check_shape("batch_norm_backward_sums", "grad_y", grad_y, x.rows, x.cols);
  detail::check_shape("batch_norm_backward_sums", "reduce", reduce, 2, x.cols);
  for (const ConstTensorView& v : {stats, grad_y, ConstTensorView(reduce)})
    detail::check_device("batch_norm_backward_sums", "every operand", v, x.device);
  HALO_EXPECTS(!detail::overlaps(reduce, x) && !detail::overlaps(reduce, stats) && !detail::overlaps(reduce, grad_y),
               "reduce may not overlap the inputs");
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::batch_norm_backward_sums(x, stats, grad_y, reduce);
    return;
  }
  cpu::batch_norm_backward_sums(x, stats, grad_y, reduce);
}

void batch_norm_backward(ConstTensorView x, ConstTensorView stats, ConstTensorView gamma, ConstTensorView grad_y,
                         ConstTensorView reduce, double n, TensorView grad_x, TensorView grad_gamma,
                         TensorView grad_beta) {
  detail::check_view("batch_norm_backward", "x", x);
  detail::check_shape("batch_norm_backward", "stats", stats, 2, x.cols);
  detail::check_shape("batch_norm_backward", "gamma", gamma, 1, x.cols);
  detail::check_shape("batch_norm_backward", "grad_y", grad_y, x.rows, x.cols);
  detail::check_shape("batch_norm_backward", "reduce", reduce, 2, x.cols);
  detail::check_shape("batch_norm_backward", "grad_x", grad_x, x.rows, x.cols);
  detail::check_shape("batch_norm_backward", "grad_gamma", grad_gamma, 1, x.cols);
  detail::check_shape("batch_norm_backward", "grad_beta", grad_beta, 1, x.cols);
  for (const ConstTensorView& v :
       {stats, gamma, grad_y, reduce, ConstTensorView(grad_x), ConstTensorView(grad_gamma), ConstTensorView(grad_beta)})
    detail::check_device("batch_norm_backward", "every operand", v, x.device);
  HALO_EXPECTS(n > 0, "the row count n must be positive, got " + std::to_string(n));
  HALO_EXPECTS(detail::same_or_disjoint(grad_y, grad_x) && !detail::overlaps(grad_x, x) &&
                   !detail::overlaps(grad_x, stats) && !detail::overlaps(grad_x, gamma) &&
                   !detail::overlaps(grad_x, reduce),
               "grad_x must be grad_y itself or not overlap it, and may not overlap the other inputs");
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::batch_norm_backward(x, stats, gamma, grad_y, reduce, n, grad_x, grad_gamma, grad_beta);
    return;
  }
  cpu::batch_norm_backward(x, stats, gamma, grad_y, reduce, n, grad_x, grad_gamma, grad_beta);
}

}  // namespace halo::kernels
