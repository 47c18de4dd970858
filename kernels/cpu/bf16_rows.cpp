// CPU twins of the bfloat16 storage kernels (kernels/bf16_rows.hpp): rows in parallel.
#include <cstdint>
#include <cstring>

#include "graph/base/half.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/row_loop.hpp"

namespace halo::kernels::cpu {

// float_to_bfloat16's rounding written without branches, so that the loop vectorises: both
// results are computed and the NaN one selected.
void narrow_to_bf16(ConstTensorView x, std::uint16_t* out, std::int64_t out_stride) {
  for_rows(x.rows, x.cols, [&](std::int64_t i) {
    const float* in = x.row(i);
    std::uint16_t* __restrict o = out + i * out_stride;
    for (std::int64_t j = 0; j < x.cols; ++j) {
      std::uint32_t bits;
      std::memcpy(&bits, in + j, sizeof bits);
      const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
      const std::uint32_t nan = (bits >> 16) | 0x40u;
      o[j] = static_cast<std::uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
    }
  });
}

void widen_bf16(Bf16View x, TensorView out) {
  for_rows(x.rows, x.cols, [&](std::int64_t i) { widen_halves(HalfFormat::bfloat16, x.row(i), out.row(i), x.cols); });
}

void relu_backward_bf16(Bf16View y, ConstTensorView grad_y, TensorView grad_x, float scale) {
  for_rows(y.rows, y.cols, [&](std::int64_t i) {
    const std::uint16_t* out = y.row(i);
    const float* g = grad_y.row(i);
    float* gx = grad_x.row(i);
    for (std::int64_t j = 0; j < y.cols; ++j) gx[j] = bfloat16_to_float(out[j]) > 0.0f ? g[j] * scale : 0.0f;
  });
}

void elu_backward_bf16(Bf16View y, ConstTensorView grad_y, TensorView grad_x) {
  for_rows(y.rows, y.cols, [&](std::int64_t i) {
    const std::uint16_t* out = y.row(i);
    const float* g = grad_y.row(i);
    float* gx = grad_x.row(i);
    for (std::int64_t j = 0; j < y.cols; ++j) {
      const float v = bfloat16_to_float(out[j]);
      gx[j] = v > 0.0f ? g[j] : g[j] * (v + 1.0f);
    }
  });
}

}  // namespace halo::kernels::cpu
