// Bf16Rows: a matrix stored in bfloat16 (rounded to the nearest, ties to even), for the
// activations a training step keeps at half the bytes (--activation-dtype bf16) while every
// product still runs in float32: its readers widen it back, chunk by chunk. The values live in a
// Tensor's storage, two per float slot, so they share Tensor's devices, allocation counters and
// host block cache: the memory plan and the measured peak see them as any tensor.
#pragma once

#include <cstdint>

#include "kernels/device.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels {

// A rows x cols window of row-major bfloat16 values with row stride `stride` (in values), on
// `device`.
struct Bf16View {
  const std::uint16_t* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t stride = 0;
  Device device;

  const std::uint16_t* row(std::int64_t r) const { return data + r * stride; }
  Bf16View slice_rows(std::int64_t begin, std::int64_t end) const {
    return {data + begin * stride, end - begin, cols, stride, device};
  }
};

// Owning, move-only bfloat16 matrix; rows are padded to an even count of values.
class Bf16Rows {
 public:
  Bf16Rows() = default;
  // x rounded to bfloat16 (NaN stays NaN, magnitudes past the largest finite bfloat16 become
  // infinity), on x's device. O(rows · cols), rows in parallel.
  static Bf16Rows narrow(ConstTensorView x);
  // A rows x cols matrix on `device` whose values are yet to be written (copy_bits).
  static Bf16Rows empty(std::int64_t rows, std::int64_t cols, const Device& device);
  // The bytes a rows x cols Bf16Rows holds: rows · ceil(cols / 2) floats.
  static std::int64_t bytes_for(std::int64_t rows, std::int64_t cols) {
    return rows * ((cols + 1) / 2) * static_cast<std::int64_t>(sizeof(float));
  }

  std::int64_t rows() const { return storage_.rows(); }
  std::int64_t cols() const { return cols_; }
  bool empty() const { return rows() == 0 || cols_ == 0; }
  const Device& device() const { return storage_.device(); }
  Bf16View view() const;
  // Writes `bits` (rows x cols() bfloat16 values, row-major and contiguous, in host memory) into
  // rows [first_row, first_row + rows): bfloat16 features as a file stores them, kept at half
  // the bytes. On a GPU through one host copy of those rows. InvalidArgument for rows outside.
  void copy_bits(std::int64_t first_row, const std::uint16_t* bits, std::int64_t rows);

 private:
  Tensor storage_;  // rows x ceil(cols / 2) floats, each holding two values
  std::int64_t cols_ = 0;
};

// out = the float32 values of x (exact: bfloat16 is a subset of float32). Same shape and device.
void widen(Bf16View x, TensorView out);
// grad_x = grad_y · scale where y > 0, else 0: relu_backward reading the ReLU output y from its
// bfloat16 copy (rounding keeps every sign; only positive values below 2^-133 round to zero, whose
// gradient then stops as the forward's zero would). grad_x may be grad_y itself.
void relu_backward(Bf16View y, ConstTensorView grad_y, TensorView grad_x, float scale = 1.0f);
// grad_x = grad_y where y > 0, else grad_y · (y + 1): elu_backward reading the ELU output y from
// its bfloat16 copy. The derivative e^x = y + 1 is then that of the rounded output (relative error
// up to 2^-9 of y, so at most 2^-9 in the factor's absolute value). grad_x may be grad_y itself.
void elu_backward(Bf16View y, ConstTensorView grad_y, TensorView grad_x);

}  // namespace halo::kernels
