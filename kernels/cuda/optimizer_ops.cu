// CUDA Adam / AdamW / SGD steps, twins of kernels/cpu/optimizer_ops.cpp, sharing its Adam update
// (kernels/detail/adam_update.hpp); the elementwise update runs in float on the GPU (the
// compiler may fuse a multiply and an add, so the last bit can differ from the CPU's). And the
// row-sparse Adam over SparseRows' device flags and counts, twin of kernels/cpu/sparse_rows.cpp:
// one warp per row, so a row's flag, count and values change together without atomics and
// nothing is read back to the host.
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"
#include "kernels/detail/adam_update.hpp"

namespace halo::kernels::cuda {
namespace {

using detail::AdamConstants;
using detail::AdamStepFactors;

struct Adam {
  float* p;
  std::int64_t p_stride;
  const float* g;
  std::int64_t g_stride;
  float* m;
  std::int64_t m_stride;
  float* v;
  std::int64_t v_stride;
  AdamConstants c;
  AdamStepFactors f;
  __device__ void operator()(std::int64_t i, std::int64_t j) const {
    detail::adam_update(p[i * p_stride + j], g[i * g_stride + j], m[i * m_stride + j], v[i * v_stride + j], c, f.neg_step_size,
               f.bias_correction2_sqrt);
  }
};

// Row rows[k] with its own factors factors[2k], factors[2k + 1].
struct AdamRows {
  float* p;
  std::int64_t p_stride;
  const float* g;
  std::int64_t g_stride;
  float* m;
  std::int64_t m_stride;
  float* v;
  std::int64_t v_stride;
  AdamConstants c;
  const std::int64_t* rows;
  const float* factors;
  __device__ void operator()(std::int64_t k, std::int64_t j) const {
    const std::int64_t i = rows[k];
    detail::adam_update(p[i * p_stride + j], g[i * g_stride + j], m[i * m_stride + j], v[i * v_stride + j], c, factors[2 * k],
               factors[2 * k + 1]);
  }
};

constexpr int warp_size = 32;
constexpr unsigned int full_warp = 0xffffffffu;

// Calls op(row, lane) for every row with the 32 lanes of one warp (a grid-stride loop over rows,
// each warp taking whole rows, so the warp's lanes stay together for __syncwarp and votes).
template <class Op>
__global__ void row_warps_kernel(std::int64_t rows, Op op) {
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / warp_size;
  const int lane = static_cast<int>(threadIdx.x % warp_size);
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / warp_size; i < rows;
       i += warps)
    op(i, lane);
}

template <class Op>
void launch_row_warps(int device, std::int64_t rows, const Op& op) {
  if (rows == 0) return;
  row_warps_kernel<<<blocks_for(rows * warp_size), threads_per_block, 0, stream_of(device)>>>(rows, op);
  HALO_CUDA_CHECK_LAUNCH();
}

struct AccumulateRowGrad {
  const float* a;
  std::int64_t a_stride;
  float* g;
  std::int64_t g_stride;
  std::int64_t cols;
  std::uint8_t* touched;
  __device__ void operator()(std::int64_t i, int lane) const {
    bool nonzero = false;
    for (std::int64_t j = lane; j < cols; j += warp_size) {
      const float x = a[i * a_stride + j];
      g[i * g_stride + j] += x;
      nonzero = nonzero || x != 0.0f;
    }
    const bool any = __any_sync(full_warp, nonzero) != 0;
    if (lane == 0 && any) touched[i] = 1;
  }
};

struct AdamTouched {
  float* p;
  std::int64_t p_stride;
  float* g;
  std::int64_t g_stride;
  float* m;
  std::int64_t m_stride;
  float* v;
  std::int64_t v_stride;
  std::int64_t cols;
  AdamConstants c;
  double lr, beta1, beta2;  // for each row's AdamStepFactors, formed here from its own count
  std::uint8_t* touched;
  std::int64_t* steps;
  __device__ void operator()(std::int64_t i, int lane) const {
    if (touched[i] == 0) return;  // the same for every lane
    const std::int64_t step = steps[i] + 1;
    const detail::AdamStepFactors f(lr, beta1, beta2, step);
    for (std::int64_t j = lane; j < cols; j += warp_size) {
      float& gj = g[i * g_stride + j];
      detail::adam_update(p[i * p_stride + j], gj, m[i * m_stride + j], v[i * v_stride + j], c, f.neg_step_size,
                          f.bias_correction2_sqrt);
      gj = 0.0f;
    }
    __syncwarp(full_warp);  // every lane has read the flag and the count
    if (lane == 0) {
      steps[i] = step;
      touched[i] = 0;
    }
  }
};

struct ClearTouched {
  float* g;
  std::int64_t g_stride;
  std::int64_t cols;
  std::uint8_t* touched;
  __device__ void operator()(std::int64_t i, int lane) const {
    if (touched[i] == 0) return;
    for (std::int64_t j = lane; j < cols; j += warp_size) g[i * g_stride + j] = 0.0f;
    __syncwarp(full_warp);
    if (lane == 0) touched[i] = 0;
  }
};

struct Sgd {
  float* p;
  std::int64_t p_stride;
  const float* g;
  std::int64_t g_stride;
  float* buf;  // nullptr without momentum
  std::int64_t buf_stride;
  float wd, mu, neg_lr;
  bool first, nesterov;
  __device__ void operator()(std::int64_t i, std::int64_t j) const {
    float& pv = p[i * p_stride + j];
    float d = g[i * g_stride + j];
    if (wd != 0.0f) d = d + wd * pv;
    if (buf != nullptr) {
      float& b = buf[i * buf_stride + j];
      b = first ? d : b * mu + d;
      d = nesterov ? d + mu * b : b;
    }
    pv = pv + neg_lr * d;
  }
};

}  // namespace

void adam_step(TensorView param, ConstTensorView grad, TensorView m, TensorView v, const AdamHyper& h,
               std::int64_t step) {
  const int d = param.device.index;
  ScopedDevice scoped(d);
  launch_elementwise(d, param.rows, param.cols,
                     Adam{param.data, param.stride, grad.data, grad.stride, m.data, m.stride, v.data, v.stride,
                          AdamConstants(h), AdamStepFactors(h, step)},
                     packed(param.cols, {param.stride, grad.stride, m.stride, v.stride}));
}

void adam_step_rows(TensorView param, ConstTensorView grad, TensorView m, TensorView v, IndexView rows,
                    const std::int64_t* steps, const AdamHyper& h) {
  const int d = param.device.index;
  ScopedDevice scoped(d);
  if (rows.size == 0 || param.cols == 0) return;
  std::vector<float> factors(static_cast<std::size_t>(2 * rows.size));
  for (std::int64_t k = 0; k < rows.size; ++k) {
    const AdamStepFactors f(h, steps[k]);
    factors[static_cast<std::size_t>(2 * k)] = f.neg_step_size;
    factors[static_cast<std::size_t>(2 * k + 1)] = f.bias_correction2_sqrt;
  }
  const DeviceBuffer<std::int64_t> device_rows = upload(d, rows.data, rows.size);
  const DeviceBuffer<float> device_factors = upload(d, factors.data(), 2 * rows.size);
  launch_elementwise(d, rows.size, param.cols,
                     AdamRows{param.data, param.stride, grad.data, grad.stride, m.data, m.stride, v.data, v.stride,
                              AdamConstants(h), device_rows.data(), device_factors.data()});
}

void accumulate_row_grad(ConstTensorView grad_all, TensorView grad, std::uint8_t* touched) {
  const int d = grad.device.index;
  ScopedDevice scoped(d);
  launch_row_warps(d, grad.rows,
                   AccumulateRowGrad{grad_all.data, grad_all.stride, grad.data, grad.stride, grad.cols, touched});
}

void adam_step_touched(TensorView param, TensorView grad, TensorView m, TensorView v, std::uint8_t* touched,
                       std::int64_t* steps, const AdamHyper& h) {
  const int d = param.device.index;
  ScopedDevice scoped(d);
  launch_row_warps(d, param.rows,
                   AdamTouched{param.data, param.stride, grad.data, grad.stride, m.data, m.stride, v.data, v.stride,
                               param.cols, AdamConstants(h), static_cast<double>(h.lr), static_cast<double>(h.beta1),
                               static_cast<double>(h.beta2), touched, steps});
}

void clear_touched(TensorView grad, std::uint8_t* touched) {
  const int d = grad.device.index;
  ScopedDevice scoped(d);
  launch_row_warps(d, grad.rows, ClearTouched{grad.data, grad.stride, grad.cols, touched});
}

void sgd_step(TensorView param, ConstTensorView grad, TensorView momentum, const SgdHyper& h, std::int64_t step) {
  const int d = param.device.index;
  ScopedDevice scoped(d);
  const bool with_momentum = h.momentum != 0.0f;
  launch_elementwise(d, param.rows, param.cols,
                     Sgd{param.data, param.stride, grad.data, grad.stride, with_momentum ? momentum.data : nullptr,
                         momentum.stride, h.weight_decay, h.momentum, -h.lr, step == 1, h.nesterov},
                     packed(param.cols, {param.stride, grad.stride, with_momentum ? momentum.stride : param.cols}));
}

}  // namespace halo::kernels::cuda
