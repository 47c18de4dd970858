// Elementwise and reduction dispatch: checks the operands, times the call, runs the CPU or CUDA
// implementation.
#include "kernels/elementwise.hpp"

#include <string>

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

namespace {

// y = f(x) elementwise (y the same shape, aliasing x exactly or not at all): the checks, the
// timer, and cpu_op() or cuda_op() by the operands' device.
template <class CpuOp, class CudaOp>
void unary(const char* op, ConstTensorView x, TensorView y, CpuOp&& cpu_op, CudaOp&& cuda_op) {
  detail::check_view(op, "x", x);
  detail::check_shape(op, "y", y, x.rows, x.cols);
  detail::check_device(op, "y", y, x.device);
  HALO_KERNEL_EXPECTS(op, detail::same_or_disjoint(x, y), "y must be x itself or not overlap it");
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda_op();
    return;
  }
  cpu_op();
}

// grad_x from grad_y and a tensor the forward saved (its input or output, named `saved_name`):
// grad_x aliases grad_y exactly or not at all, and does not overlap the saved tensor.
template <class CpuOp, class CudaOp>
void unary_backward(const char* op, const char* saved_name, ConstTensorView saved, ConstTensorView grad_y,
                    TensorView grad_x, CpuOp&& cpu_op, CudaOp&& cuda_op) {
  detail::check_view(op, saved_name, saved);
  detail::check_shape(op, "grad_y", grad_y, saved.rows, saved.cols);
  detail::check_shape(op, "grad_x", grad_x, saved.rows, saved.cols);
  detail::check_device(op, "grad_y", grad_y, saved.device);
  detail::check_device(op, "grad_x", grad_x, saved.device);
  HALO_KERNEL_EXPECTS(op, detail::same_or_disjoint(grad_y, grad_x) && !detail::overlaps(grad_x, saved),
                      std::string("grad_x must be grad_y itself or not overlap it, and not overlap ") + saved_name);
  ScopedKernelTimer timer(KernelFamily::other, saved.device);
  if (saved.device.is_cuda()) {
    require_device(saved.device);
    cuda_op();
    return;
  }
  cpu_op();
}

}  // namespace

void relu_forward(ConstTensorView x, TensorView y) {
  unary("relu_forward", x, y, [&] { cpu::relu_forward(x, y); }, [&] { cuda::relu_forward(x, y); });
}

void elu_forward(ConstTensorView x, TensorView y) {
  unary("elu_forward", x, y, [&] { cpu::elu_forward(x, y); }, [&] { cuda::elu_forward(x, y); });
}

void elu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x) {
  unary_backward(
      "elu_backward", "y", y, grad_y, grad_x, [&] { cpu::elu_backward(y, grad_y, grad_x); },
      [&] { cuda::elu_backward(y, grad_y, grad_x); });
}

void gelu_forward(ConstTensorView x, TensorView y) {
  unary("gelu_forward", x, y, [&] { cpu::gelu_forward(x, y); }, [&] { cuda::gelu_forward(x, y); });
}

void gelu_backward(ConstTensorView x, ConstTensorView grad_y, TensorView grad_x) {
  unary_backward(
      "gelu_backward", "x", x, grad_y, grad_x, [&] { cpu::gelu_backward(x, grad_y, grad_x); },
      [&] { cuda::gelu_backward(x, grad_y, grad_x); });
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
  unary("axpby", x, y, [&] { cpu::axpby(alpha, x, beta, y); }, [&] { cuda::axpby(alpha, x, beta, y); });
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
    return cuda::sum_of_products(x, x);
  }
  return cpu::sum_of_products(x, x);
}

double sum_of_products(ConstTensorView x, ConstTensorView y) {
  detail::check_view("sum_of_products", "x", x);
  detail::check_shape("sum_of_products", "y", y, x.rows, x.cols);
  detail::check_device("sum_of_products", "y", y, x.device);
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    return cuda::sum_of_products(x, y);
  }
  return cpu::sum_of_products(x, y);
}

}  // namespace halo::kernels
