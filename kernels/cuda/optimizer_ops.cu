// CUDA Adam / AdamW / SGD steps, twins of kernels/cpu/optimizer_ops.cpp: the scalar factors are
// formed on the host in double and rounded once, exactly as there; the elementwise update runs
// in float on the GPU (the compiler may fuse a multiply and an add, so the last bit can differ
// from the CPU's).
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"

namespace halo::kernels::cuda {
namespace {

struct AdamConstants {
  bool l2, decoupled;
  float decay, wd, w1, beta2, one_minus_beta2, eps;
  explicit AdamConstants(const AdamHyper& h) {
    const double lr = h.lr, wd_d = h.weight_decay;
    l2 = wd_d != 0.0 && !h.decoupled;
    decay = static_cast<float>(1.0 - lr * wd_d);
    decoupled = wd_d != 0.0 && h.decoupled;
    wd = static_cast<float>(wd_d);
    w1 = static_cast<float>(1.0 - static_cast<double>(h.beta1));
    beta2 = static_cast<float>(static_cast<double>(h.beta2));
    one_minus_beta2 = static_cast<float>(1.0 - static_cast<double>(h.beta2));
    eps = h.eps;
  }
};

// -lr / bias_correction1 and sqrt(bias_correction2) of step `step`.
struct AdamStepFactors {
  float neg_step_size, bias_correction2_sqrt;
  AdamStepFactors(const AdamHyper& h, std::int64_t step) {
    const double bias_correction1 = 1.0 - std::pow(static_cast<double>(h.beta1), static_cast<double>(step));
    const double bias_correction2 = 1.0 - std::pow(static_cast<double>(h.beta2), static_cast<double>(step));
    neg_step_size = static_cast<float>(-(static_cast<double>(h.lr) / bias_correction1));
    bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2));
  }
};

__device__ inline void adam_value(float& p, float g, float& m, float& v, const AdamConstants& c, float neg_step_size,
                                  float bias_correction2_sqrt) {
  if (c.l2) g = g + c.wd * p;
  if (c.decoupled) p = p * c.decay;
  m = c.w1 < 0.5f ? m + c.w1 * (g - m) : g - (g - m) * (1.0f - c.w1);
  v = v * c.beta2;
  v = v + c.one_minus_beta2 * g * g;
  const float denom = sqrtf(v) / bias_correction2_sqrt + c.eps;
  p = p + neg_step_size * m / denom;
}

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
    adam_value(p[i * p_stride + j], g[i * g_stride + j], m[i * m_stride + j], v[i * v_stride + j], c, f.neg_step_size,
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
    adam_value(p[i * p_stride + j], g[i * g_stride + j], m[i * m_stride + j], v[i * v_stride + j], c, factors[2 * k],
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
