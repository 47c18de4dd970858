// CUDA Adam / AdamW / SGD steps, twins of kernels/cpu/optimizer_ops.cpp, sharing its Adam update
// (kernels/detail/adam_update.hpp); the elementwise update runs in float on the GPU (the compiler may fuse a multiply and an add, so the last bit can differ
// from the CPU's).
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
                          AdamConstants(h), AdamStepFactors(h, step)});
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

void sgd_step(TensorView param, ConstTensorView grad, TensorView momentum, const SgdHyper& h, std::int64_t step) {
  const int d = param.device.index;
  ScopedDevice scoped(d);
  const bool with_momentum = h.momentum != 0.0f;
  launch_elementwise(d, param.rows, param.cols,
                     Sgd{param.data, param.stride, grad.data, grad.stride, with_momentum ? momentum.data : nullptr,
                         momentum.stride, h.weight_decay, h.momentum, -h.lr, step == 1, h.nesterov});
}

}  // namespace halo::kernels::cuda
