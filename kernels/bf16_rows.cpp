// Bf16Rows and its dispatch: checks the operands, times the call, runs the CPU or CUDA twin.
#include "kernels/bf16_rows.hpp"

#include <cstring>
#include <string>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {

Bf16Rows Bf16Rows::narrow(ConstTensorView x) {
  detail::check_view("Bf16Rows::narrow", "x", x);
  Bf16Rows out;
  out.storage_ = Tensor::empty(x.rows, (x.cols + 1) / 2, x.device);
  out.cols_ = x.cols;
  auto* halves = reinterpret_cast<std::uint16_t*>(out.storage_.data());
  const std::int64_t stride = 2 * out.storage_.cols();
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::narrow_to_bf16(x, halves, stride);
  } else {
    cpu::narrow_to_bf16(x, halves, stride);
  }
  return out;
}

Bf16Rows Bf16Rows::empty(std::int64_t rows, std::int64_t cols, const Device& device) {
  HALO_EXPECTS(rows >= 0 && cols >= 0,
               "Bf16Rows::empty: negative shape " + std::to_string(rows) + " x " + std::to_string(cols));
  Bf16Rows out;
  out.storage_ = Tensor::empty(rows, (cols + 1) / 2, device);
  out.cols_ = cols;
  return out;
}

void Bf16Rows::copy_bits(std::int64_t first_row, const std::uint16_t* bits, std::int64_t rows) {
  HALO_EXPECTS(first_row >= 0 && rows >= 0 && first_row + rows <= this->rows(),
               "Bf16Rows::copy_bits: rows [" + std::to_string(first_row) + ", " + std::to_string(first_row + rows) +
                   ") outside the " + std::to_string(this->rows()) + " rows");
  const TensorView target = storage_.view().slice_rows(first_row, first_row + rows);
  Tensor host;  // a GPU's rows are laid out in host memory first
  const TensorView laid_out = device().is_cuda() ? (host = Tensor::empty(rows, storage_.cols())).view() : target;
  const auto row_bytes = static_cast<std::size_t>(cols_) * sizeof(std::uint16_t);
  for (std::int64_t r = 0; r < rows; ++r) {
    auto* row = reinterpret_cast<std::uint16_t*>(laid_out.data + r * laid_out.stride);
    std::memcpy(row, bits + r * cols_, row_bytes);
    if (cols_ % 2 != 0) row[cols_] = 0;  // the padding value of an odd row
  }
  if (device().is_cuda()) copy(laid_out, target);
}

Bf16View Bf16Rows::view() const {
  return {reinterpret_cast<const std::uint16_t*>(storage_.data()), rows(), cols_, 2 * storage_.cols(), device()};
}

void widen(Bf16View x, TensorView out) {
  detail::check_view("widen", "x", x);
  detail::check_shape("widen", "out", out, x.rows, x.cols);
  detail::check_device("widen", "out", out, x.device);
  HALO_EXPECTS(!detail::spans_meet(x, out), "out may not overlap x");
  ScopedKernelTimer timer(KernelFamily::other, x.device);
  if (x.device.is_cuda()) {
    require_device(x.device);
    cuda::widen_bf16(x, out);
    return;
  }
  cpu::widen_bf16(x, out);
}

namespace {

// The operands of an activation's backward from a bfloat16 output y.
void check_backward(const char* op, Bf16View y, ConstTensorView grad_y, TensorView grad_x) {
  detail::check_view(op, "y", y);
  detail::check_shape(op, "grad_y", grad_y, y.rows, y.cols);
  detail::check_shape(op, "grad_x", grad_x, y.rows, y.cols);
  detail::check_device(op, "grad_y", grad_y, y.device);
  detail::check_device(op, "grad_x", grad_x, y.device);
  HALO_EXPECTS(detail::same_or_disjoint(grad_y, grad_x), "grad_x must be grad_y itself or disjoint from it");
  HALO_EXPECTS(!detail::spans_meet(y, grad_x), "grad_x may not overlap y");
}

}  // namespace

void relu_backward(Bf16View y, ConstTensorView grad_y, TensorView grad_x, float scale) {
  check_backward("relu_backward", y, grad_y, grad_x);
  ScopedKernelTimer timer(KernelFamily::other, y.device);
  if (y.device.is_cuda()) {
    require_device(y.device);
    cuda::relu_backward_bf16(y, grad_y, grad_x, scale);
    return;
  }
  cpu::relu_backward_bf16(y, grad_y, grad_x, scale);
}

void elu_backward(Bf16View y, ConstTensorView grad_y, TensorView grad_x) {
  check_backward("elu_backward", y, grad_y, grad_x);
  ScopedKernelTimer timer(KernelFamily::other, y.device);
  if (y.device.is_cuda()) {
    require_device(y.device);
    cuda::elu_backward_bf16(y, grad_y, grad_x);
    return;
  }
  cpu::elu_backward_bf16(y, grad_y, grad_x);
}

}  // namespace halo::kernels
