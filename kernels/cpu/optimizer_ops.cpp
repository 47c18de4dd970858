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

// The scalar factors of one Adam step, formed in double and rounded once.
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

// The factors that depend on the step count.
struct AdamStepFactors {
  float neg_step_size, bias_correction2_sqrt;
  AdamStepFactors(const AdamHyper& h, std::int64_t step) {
    const double bias_correction1 = 1.0 - std::pow(static_cast<double>(h.beta1), static_cast<double>(step));
    const double bias_correction2 = 1.0 - std::pow(static_cast<double>(h.beta2), static_cast<double>(step));
    neg_step_size = static_cast<float>(-(static_cast<double>(h.lr) / bias_correction1));
    bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2));
  }
};

void adam_row(float* p, const float* g_row, float* m, float* v, std::int64_t cols, const AdamConstants& c,
              const AdamStepFactors& f) {
  for (std::int64_t j = 0; j < cols; ++j) {
    float g = g_row[j];
    if (c.l2) g = g + c.wd * p[j];
    if (c.decoupled) p[j] = p[j] * c.decay;
    m[j] = c.w1 < 0.5f ? m[j] + c.w1 * (g - m[j]) : g - (g - m[j]) * (1.0f - c.w1);
    v[j] = v[j] * c.beta2;
    v[j] = v[j] + c.one_minus_beta2 * g * g;
    const float denom = std::sqrt(v[j]) / f.bias_correction2_sqrt + c.eps;
    p[j] = p[j] + f.neg_step_size * m[j] / denom;
  }
}

}  // namespace

void adam_step(TensorView param, ConstTensorView grad, TensorView m, TensorView v, const AdamHyper& h,
               std::int64_t step) {
  const AdamConstants c(h);
  const AdamStepFactors f(h, step);
  for_rows(param.rows, param.cols, [&](std::int64_t i) {
    adam_row(param.row(i), grad.row(i), m.row(i), v.row(i), param.cols, c, f);
  });
}

void adam_step_rows(TensorView param, ConstTensorView grad, TensorView m, TensorView v, IndexView rows,
                    const std::int64_t* steps, const AdamHyper& h) {
  const AdamConstants c(h);
  for_rows(rows.size, param.cols, [&](std::int64_t k) {
    const std::int64_t i = rows.data[k];
    adam_row(param.row(i), grad.row(i), m.row(i), v.row(i), param.cols, c, AdamStepFactors(h, steps[k]));
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
