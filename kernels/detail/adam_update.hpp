// One Adam / AdamW update of one value, shared by the CPU and CUDA twins of adam_step and
// adam_step_rows: PyTorch's single-tensor formulation, scalar factors formed on the host in double
// and rounded to float once, the elementwise work in float.
#pragma once

#include <cmath>
#include <cstdint>

#include "graph/base/host_device.hpp"
#include "kernels/optimizer_ops.hpp"

namespace halo::kernels::detail {

// The factors that do not depend on the step count.
struct AdamConstants {
  bool l2, decoupled;
  float decay, wd, w1, beta2, one_minus_beta2, eps;
  explicit AdamConstants(const AdamHyper& h) {
    const double lr = h.lr, wd_d = h.weight_decay;
    l2 = wd_d != 0.0 && !h.decoupled;
    // AdamW: param.mul_(1 - lr * weight_decay) before the moments.
    decay = static_cast<float>(1.0 - lr * wd_d);
    decoupled = wd_d != 0.0 && h.decoupled;
    wd = static_cast<float>(wd_d);
    // exp_avg.lerp_(grad, 1 - beta1): PyTorch's lerp is a + w (b - a) for w < 0.5, else b - (b - a)(1 - w).
    w1 = static_cast<float>(1.0 - static_cast<double>(h.beta1));
    beta2 = static_cast<float>(static_cast<double>(h.beta2));
    one_minus_beta2 = static_cast<float>(1.0 - static_cast<double>(h.beta2));
    eps = h.eps;
  }
};

// -lr / bias_correction1 and sqrt(bias_correction2) of step `step` (from 1), formed in double.
// Also formed on a GPU, per row, by the row-sparse Adam (its pow may round its last bit apart
// from the host's).
struct AdamStepFactors {
  float neg_step_size, bias_correction2_sqrt;
  HALO_HOST_DEVICE AdamStepFactors(double lr, double beta1, double beta2, std::int64_t step) {
    const double bias_correction1 = 1.0 - ::pow(beta1, static_cast<double>(step));
    const double bias_correction2 = 1.0 - ::pow(beta2, static_cast<double>(step));
    neg_step_size = static_cast<float>(-(lr / bias_correction1));
    bias_correction2_sqrt = static_cast<float>(::sqrt(bias_correction2));
  }
  AdamStepFactors(const AdamHyper& h, std::int64_t step)
      : AdamStepFactors(static_cast<double>(h.lr), static_cast<double>(h.beta1), static_cast<double>(h.beta2), step) {}
};

// The update of parameter p with gradient g and moments m, v.
HALO_HOST_DEVICE inline void adam_update(float& p, float g, float& m, float& v, const AdamConstants& c,
                                         float neg_step_size, float bias_correction2_sqrt) {
  if (c.l2) g = g + c.wd * p;
  if (c.decoupled) p = p * c.decay;
  m = c.w1 < 0.5f ? m + c.w1 * (g - m) : g - (g - m) * (1.0f - c.w1);
  v = v * c.beta2;
  v = v + c.one_minus_beta2 * g * g;
  const float denom = sqrtf(v) / bias_correction2_sqrt + c.eps;
  p = p + neg_step_size * m / denom;
}

}  // namespace halo::kernels::detail
