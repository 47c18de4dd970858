// Elementwise and reduction dispatch: checks the operands, times the call, runs the CPU or CUDA
// implementation.
#include "kernels/elementwise.hpp"

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {
void add_bias(TensorView x, ConstTensorView bias) {
  detail::check_view("add_bias", "x", x);
  detail::check_shape("add_bias", "bias", bias, 1, x.cols);
  detail::check_device("add_bias", "bias", bias, x.device);
  HALO_EXPECTS(!detail::overlaps(x, bias), "bias may not overlap x");
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::add_bias(x, bias);
    return;
  }
  cpu::add_bias(x, bias);
}

void column_sums(ConstTensorView x, TensorView out, bool accumulate) {
  detail::check_view("column_sums", "x", x);
  detail::check_shape("column_sums", "out", out, 1, x.cols);
  detail::check_device("column_sums", "out", out, x.device);
  HALO_EXPECTS(!detail::overlaps(x, out), "out may not overlap x");
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::column_sums(x, out, accumulate);
    return;
  }
  cpu::column_sums(x, out, accumulate);
}

void relu_forward(ConstTensorView x, TensorView y) {
  detail::check_view("relu_forward", "x", x);
  detail::check_shape("relu_forward", "y", y, x.rows, x.cols);
  detail::check_device("relu_forward", "y", y, x.device);
  HALO_EXPECTS(detail::same_or_disjoint(x, y), "y must be x itself or not overlap it");
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::relu_forward(x, y);
    return;
  }
  cpu::relu_forward(x, y);
}

void elu_forward(ConstTensorView x, TensorView y) {
  detail::check_view("elu_forward", "x", x);
  detail::check_shape("elu_forward", "y", y, x.rows, x.cols);
  detail::check_device("elu_forward", "y", y, x.device);
  HALO_EXPECTS(detail::same_or_disjoint(x, y), "y must alias x exactly or not overlap it");
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::elu_forward(x, y);
    return;
  }
  cpu::elu_forward(x, y);
}

void elu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x) {
  detail::check_view("elu_backward", "y", y);
  detail::check_shape("elu_backward", "grad_y", grad_y, y.rows, y.cols);
  detail::check_shape("elu_backward", "grad_x", grad_x, y.rows, y.cols);
  detail::check_device("elu_backward", "grad_y", grad_y, y.device);
  detail::check_device("elu_backward", "grad_x", grad_x, y.device);
  HALO_EXPECTS(detail::same_or_disjoint(grad_y, grad_x) && !detail::overlaps(grad_x, y),
               "grad_x must alias grad_y exactly or not overlap it, and not overlap y");
  ScopedKernelTimer timer(KernelFamily::other, y.device);
  if (y.device.is_cuda()) {
    require_device(y.device);
    cuda::elu_backward(y, grad_y, grad_x);
    return;
  }
  cpu::elu_backward(y, grad_y, grad_x);
}

void relu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x, float scale) {
  detail::check_view("relu_backward", "y", y);
  detail::check_shape("relu_backward", "grad_y", grad_y, y.rows, y.cols);
  detail::check_shape("relu_backward", "grad_x", grad_x, y.rows, y.cols);
  detail::check_device("relu_backward", "grad_y", grad_y, y.device);
  detail::check_device("relu_backward", "grad_x", grad_x, y.device);
  HALO_EXPECTS(detail::same_or_disjoint(grad_y, grad_x) && detail::same_or_disjoint(y, grad_x),
               "grad_x must be grad_y (or y) itself or not overlap it");
  ScopedKernelTimer timer(KernelFamily::other, y.device);
  if (y.device.is_cuda()) {
    require_device(y.device);
    cuda::relu_backward(y, grad_y, grad_x, scale);
    return;
  }
  cpu::relu_backward(y, grad_y, grad_x, scale);
}

void axpby(float alpha, ConstTensorView x, float beta, TensorView y) {
  detail::check_view("axpby", "x", x);
  detail::check_shape("axpby", "y", y, x.rows, x.cols);
  detail::check_device("axpby", "y", y, x.device);
  HALO_EXPECTS(detail::same_or_disjoint(x, y), "y must be x itself or not overlap it");
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::axpby(alpha, x, beta, y);
    return;
  }
  cpu::axpby(alpha, x, beta, y);
}

void normalize_rows(TensorView x) {
  detail::check_view("normalize_rows", "x", x);
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::normalize_rows(x);
    return;
  }
  cpu::normalize_rows(x);
}

double sum_of_squares(ConstTensorView x) {
  detail::check_view("sum_of_squares", "x", x);
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    return cuda::sum_of_squares(x);
  }
  return cpu::sum_of_squares(x);
}

}  // namespace halo::kernels
