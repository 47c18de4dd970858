// CUDA twins of the bfloat16 storage kernels (kernels/cpu/bf16_rows.cpp), with the CPU's bits:
// the rounding is the same integer formula as graph/base/half.hpp's float_to_bfloat16.
#include <cstdint>

#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"

namespace halo::kernels::cuda {
namespace {

__device__ float bf16_to_float(std::uint16_t h) { return __uint_as_float(static_cast<unsigned>(h) << 16); }

struct NarrowToBf16 {
  const float* x;
  std::int64_t x_stride;
  std::uint16_t* out;
  std::int64_t out_stride;
  __device__ void operator()(std::int64_t r, std::int64_t c) const {
    const unsigned bits = __float_as_uint(x[r * x_stride + c]);
    const unsigned rounded = (bits & 0x7fffffffu) > 0x7f800000u ? (bits >> 16) | 0x40u  // NaN stays NaN
                                                                : (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    out[r * out_stride + c] = static_cast<std::uint16_t>(rounded);
  }
};

struct WidenBf16 {
  const std::uint16_t* x;
  std::int64_t x_stride;
  float* out;
  std::int64_t out_stride;
  __device__ void operator()(std::int64_t r, std::int64_t c) const {
    out[r * out_stride + c] = bf16_to_float(x[r * x_stride + c]);
  }
};

// ReLU's backward times `scale` (elu false) or ELU's (elu true, scale 1) from the bfloat16 output.
struct ActivationBackwardBf16 {
  const std::uint16_t* y;
  std::int64_t y_stride;
  const float* g;
  std::int64_t g_stride;
  float* gx;
  std::int64_t gx_stride;
  float scale;
  bool elu;
  __device__ void operator()(std::int64_t r, std::int64_t c) const {
    const float v = bf16_to_float(y[r * y_stride + c]);
    const float grad = g[r * g_stride + c];
    gx[r * gx_stride + c] = v > 0.0f ? grad * scale : elu ? grad * (v + 1.0f) : 0.0f;
  }
};

}  // namespace

void narrow_to_bf16(ConstTensorView x, std::uint16_t* out, std::int64_t out_stride) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(d, x.rows, x.cols, NarrowToBf16{x.data, x.stride, out, out_stride},
                     packed(x.cols, {x.stride, out_stride}));
}

void widen_bf16(Bf16View x, TensorView out) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(d, x.rows, x.cols, WidenBf16{x.data, x.stride, out.data, out.stride},
                     packed(x.cols, {x.stride, out.stride}));
}

namespace {

void activation_backward_bf16(Bf16View y, ConstTensorView grad_y, TensorView grad_x, float scale, bool elu) {
  const int d = y.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(
      d, y.rows, y.cols,
      ActivationBackwardBf16{y.data, y.stride, grad_y.data, grad_y.stride, grad_x.data, grad_x.stride, scale, elu},
      packed(y.cols, {y.stride, grad_y.stride, grad_x.stride}));
}

}  // namespace

void relu_backward_bf16(Bf16View y, ConstTensorView grad_y, TensorView grad_x, float scale) {
  activation_backward_bf16(y, grad_y, grad_x, scale, false);
}

void elu_backward_bf16(Bf16View y, ConstTensorView grad_y, TensorView grad_x) {
  activation_backward_bf16(y, grad_y, grad_x, 1.0f, true);
}

}  // namespace halo::kernels::cuda
