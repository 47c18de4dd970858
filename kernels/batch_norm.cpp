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
  ScopedKernelTimer timer(KernelFamily::other);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::batch_norm_sums(x, sums);
    return;
  }
  cpu::batch_norm_sums(x, sums);
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
  ScopedKernelTimer timer(KernelFamily::other);
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
  ScopedKernelTimer timer(KernelFamily::other);
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
  ScopedKernelTimer timer(KernelFamily::other);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::batch_norm_backward(x, stats, gamma, grad_y, reduce, n, grad_x, grad_gamma, grad_beta);
    return;
  }
  cpu::batch_norm_backward(x, stats, gamma, grad_y, reduce, n, grad_x, grad_gamma, grad_beta);
}

}  // namespace halo::kernels
