// CPU Adam / AdamW / SGD steps, following PyTorch's single-tensor CPU implementation of
// torch.optim.Adam, AdamW and SGD operation for operation: scalar factors are formed in double
// (as Python does) and rounded to float once, elementwise work is float.
#include <algorithm>
#include <cmath>

#include "graph/base/parallel.hpp"
#include "kernels/cpu/cpu_kernels.hpp"

namespace halo::kernels::cpu {
namespace {

template <class F>
void for_rows(std::int64_t rows, std::int64_t cols, F&& fn) {
  parallel_for(0, rows, fn, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(cols, 1)));
}

}  // namespace

void adam_step(TensorView param, ConstTensorView grad, TensorView m, TensorView v, const AdamHyper& h,
               std::int64_t step) {
  const double lr = h.lr, beta1 = h.beta1, beta2 = h.beta2, wd = h.weight_decay;
  const bool l2 = wd != 0.0 && !h.decoupled;
  // AdamW: param.mul_(1 - lr * weight_decay) before the moments.
  const auto decay = static_cast<float>(1.0 - lr * wd);
  const bool decoupled = wd != 0.0 && h.decoupled;
  const auto wd_f = static_cast<float>(wd);
  // exp_avg.lerp_(grad, 1 - beta1): PyTorch's lerp is a + w (b - a) for w < 0.5, else b - (b - a)(1 - w).
  const auto w1 = static_cast<float>(1.0 - beta1);
  const auto beta2_f = static_cast<float>(beta2);
  const auto one_minus_beta2 = static_cast<float>(1.0 - beta2);
  const double bias_correction1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bias_correction2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  const auto neg_step_size = static_cast<float>(-(lr / bias_correction1));
  const auto bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2));
  const float eps = h.eps;
  for_rows(param.rows, param.cols, [&](std::int64_t i) {
    float* p = param.row(i);
    const float* g_row = grad.row(i);
    float* m_row = m.row(i);
    float* v_row = v.row(i);
    for (std::int64_t j = 0; j < param.cols; ++j) {
      float g = g_row[j];
      if (l2) g = g + wd_f * p[j];
      if (decoupled) p[j] = p[j] * decay;
      m_row[j] = w1 < 0.5f ? m_row[j] + w1 * (g - m_row[j]) : g - (g - m_row[j]) * (1.0f - w1);
      v_row[j] = v_row[j] * beta2_f;
      v_row[j] = v_row[j] + one_minus_beta2 * g * g;
      const float denom = std::sqrt(v_row[j]) / bias_correction2_sqrt + eps;
      p[j] = p[j] + neg_step_size * m_row[j] / denom;
    }
  });
}

void sgd_step(TensorView param, ConstTensorView grad, TensorView momentum, const SgdHyper& h, std::int64_t step) {
  const float wd = h.weight_decay;
  const float mu = h.momentum;
  const float neg_lr = -h.lr;
  const bool first = step == 1;
  for_rows(param.rows, param.cols, [&](std::int64_t i) {
    float* p = param.row(i);
    const float* g_row = grad.row(i);
    float* buf = mu != 0.0f ? momentum.row(i) : nullptr;
    for (std::int64_t j = 0; j < param.cols; ++j) {
      float d = g_row[j];
      if (wd != 0.0f) d = d + wd * p[j];
      if (buf != nullptr) {
        // buf = d on the first step, else buf.mul_(momentum).add_(d) (no dampening).
        buf[j] = first ? d : buf[j] * mu + d;
        d = h.nesterov ? d + mu * buf[j] : buf[j];
      }
      p[j] = p[j] + neg_lr * d;
    }
  });
}

}  // namespace halo::kernels::cpu
