// CUDA elementwise ops and column / whole-tensor reductions, twins of kernels/cpu/elementwise.cpp.
// Reductions accumulate in double over fixed row blocks (kernel_util.cuh), so they give the same
// bits on every run.
#include <cstdint>
#include <vector>

#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"

namespace halo::kernels::cuda {
namespace {

struct AddBias {
  float* x;
  std::int64_t stride;
  const float* bias;
  __device__ void operator()(std::int64_t r, std::int64_t c) const { x[r * stride + c] += bias[c]; }
};

struct ReluForward {
  const float* x;
  std::int64_t x_stride;
  float* y;
  std::int64_t y_stride;
  __device__ void operator()(std::int64_t r, std::int64_t c) const {
    const float v = x[r * x_stride + c];
    y[r * y_stride + c] = v > 0.0f ? v : 0.0f;
  }
};

// GELU, exact: x · Φ(x) with Φ from normcdff.
struct GeluForward {
  const float* x;
  std::int64_t x_stride;
  float* y;
  std::int64_t y_stride;
  __device__ void operator()(std::int64_t r, std::int64_t c) const {
    const float v = x[r * x_stride + c];
    y[r * y_stride + c] = v * normcdff(v);
  }
};

// grad · (Φ(x) + x · φ(x)).
struct GeluBackward {
  const float* x;
  std::int64_t x_stride;
  const float* g;
  std::int64_t g_stride;
  float* gx;
  std::int64_t gx_stride;
  __device__ void operator()(std::int64_t r, std::int64_t c) const {
    const float v = x[r * x_stride + c];
    const float density = 0.39894228040143268f * expf(-0.5f * v * v);
    gx[r * gx_stride + c] = g[r * g_stride + c] * (normcdff(v) + v * density);
  }
};

struct ReluBackward {
  const float* y;
  std::int64_t y_stride;
  const float* g;
  std::int64_t g_stride;
  float* gx;
  std::int64_t gx_stride;
  float scale;
  __device__ void operator()(std::int64_t r, std::int64_t c) const {
    gx[r * gx_stride + c] = y[r * y_stride + c] > 0.0f ? g[r * g_stride + c] * scale : 0.0f;
  }
};

struct EluForward {
  const float* x;
  std::int64_t x_stride;
  float* y;
  std::int64_t y_stride;
  __device__ void operator()(std::int64_t r, std::int64_t c) const {
    const float v = x[r * x_stride + c];
    y[r * y_stride + c] = v > 0.0f ? v : expm1f(v);
  }
};

struct EluBackward {
  const float* y;
  std::int64_t y_stride;
  const float* g;
  std::int64_t g_stride;
  float* gx;
  std::int64_t gx_stride;
  __device__ void operator()(std::int64_t r, std::int64_t c) const {
    const float out = y[r * y_stride + c];
    const float grad = g[r * g_stride + c];
    gx[r * gx_stride + c] = out > 0.0f ? grad : grad * (out + 1.0f);
  }
};

struct Axpby {
  float alpha, beta;
  const float* x;
  std::int64_t x_stride;
  float* y;
  std::int64_t y_stride;
  __device__ void operator()(std::int64_t r, std::int64_t c) const {
    float& o = y[r * y_stride + c];
    const float v = alpha * x[r * x_stride + c];
    o = beta == 0.0f ? v : v + beta * o;
  }
};

struct ColumnTerm {
  const float* x;
  std::int64_t stride;
  __device__ void operator()(std::int64_t i, std::int64_t j, double* acc) const { acc[0] += x[i * stride + j]; }
};

struct ProductTerm {
  const float* x;
  std::int64_t x_stride;
  const float* y;
  std::int64_t y_stride;
  __device__ void operator()(std::int64_t i, std::int64_t j, double* acc) const {
    acc[0] += static_cast<double>(x[i * x_stride + j]) * y[i * y_stride + j];
  }
};

__global__ void store_column_sums(const double* total, std::int64_t cols, float* out, bool accumulate) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const auto s = static_cast<float>(total[j]);
  out[j] = accumulate ? out[j] + s : s;
}

// One warp per row: the row sum in double (lanes take strided columns, then a fixed shuffle
// tree), then every value scaled by its inverse, as the CPU twin does in double.
__global__ void normalize_rows_kernel(float* x, std::int64_t rows, std::int64_t cols, std::int64_t stride) {
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
    float* row = x + r * stride;
    double sum = 0.0;
    for (std::int64_t j = lane; j < cols; j += 32) sum += row[j];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    sum = __shfl_sync(0xffffffffu, sum, 0);
    if (sum == 0.0) continue;
    const double inverse = 1.0 / sum;
    for (std::int64_t j = lane; j < cols; j += 32) row[j] = static_cast<float>(row[j] * inverse);
  }
}

}  // namespace

void add_bias(TensorView x, ConstTensorView bias) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(d, x.rows, x.cols, AddBias{x.data, x.stride, bias.data});
}

void column_sums(ConstTensorView x, TensorView out, bool accumulate) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  if (x.cols == 0) return;
  const DeviceBuffer<double> total = column_totals<1>(d, x.rows, x.cols, ColumnTerm{x.data, x.stride});
  store_column_sums<<<blocks_for(x.cols), threads_per_block, 0, stream_of(d)>>>(total.data(), x.cols, out.data,
                                                                                accumulate);
  HALO_CUDA_CHECK_LAUNCH();
}

void relu_forward(ConstTensorView x, TensorView y) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(d, x.rows, x.cols, ReluForward{x.data, x.stride, y.data, y.stride},
                     packed(x.cols, {x.stride, y.stride}));
}

void relu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x, float scale) {
  const int d = y.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(d, y.rows, y.cols,
                     ReluBackward{y.data, y.stride, grad_y.data, grad_y.stride, grad_x.data, grad_x.stride, scale},
                     packed(y.cols, {y.stride, grad_y.stride, grad_x.stride}));
}

void elu_forward(ConstTensorView x, TensorView y) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(d, x.rows, x.cols, EluForward{x.data, x.stride, y.data, y.stride},
                     packed(x.cols, {x.stride, y.stride}));
}

void elu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x) {
  const int d = y.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(d, y.rows, y.cols,
                     EluBackward{y.data, y.stride, grad_y.data, grad_y.stride, grad_x.data, grad_x.stride},
                     packed(y.cols, {y.stride, grad_y.stride, grad_x.stride}));
}

void gelu_forward(ConstTensorView x, TensorView y) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(d, x.rows, x.cols, GeluForward{x.data, x.stride, y.data, y.stride},
                     packed(x.cols, {x.stride, y.stride}));
}

void gelu_backward(ConstTensorView x, ConstTensorView grad_y, TensorView grad_x) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(d, x.rows, x.cols,
                     GeluBackward{x.data, x.stride, grad_y.data, grad_y.stride, grad_x.data, grad_x.stride},
                     packed(x.cols, {x.stride, grad_y.stride, grad_x.stride}));
}

void axpby(float alpha, ConstTensorView x, float beta, TensorView y) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(d, x.rows, x.cols, Axpby{alpha, beta, x.data, x.stride, y.data, y.stride},
                     packed(x.cols, {x.stride, y.stride}));
}

void normalize_rows(TensorView x) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  if (x.rows == 0 || x.cols == 0) return;
  normalize_rows_kernel<<<blocks_for(x.rows * 32), threads_per_block, 0, stream_of(d)>>>(x.data, x.rows, x.cols,
                                                                                         x.stride);
  HALO_CUDA_CHECK_LAUNCH();
}

double sum_of_products(ConstTensorView x, ConstTensorView y) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  if (x.rows == 0 || x.cols == 0) return 0.0;
  const DeviceBuffer<double> total =
      column_totals<1>(d, x.rows, x.cols, ProductTerm{x.data, x.stride, y.data, y.stride});
  std::vector<double> host(static_cast<std::size_t>(x.cols));
  download(d, total.data(), host.data(), x.cols);
  double s = 0.0;
  for (const double v : host) s += v;
  return s;
}

}  // namespace halo::kernels::cuda
