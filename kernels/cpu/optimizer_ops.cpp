// CPU Adam / AdamW / SGD steps, following PyTorch's single-tensor CPU implementation of
// torch.optim.Adam, AdamW and SGD operation for operation: scalar factors are formed in double
// (as Python does) and rounded to float once, elementwise work is float.
#include <algorithm>
#include <cmath>

#include "graph/base/parallel.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/row_loop.hpp"
#include "kernels/detail/adam_update.hpp"

namespace halo::kernels::cpu {
namespace {

void adam_row(float* p, const float* g, float* m, float* v, std::int64_t cols, const detail::AdamConstants& c,
              const detail::AdamStepFactors& f) {
  for (std::int64_t j = 0; j < cols; ++j)
    detail::adam_update(p[j], g[j], m[j], v[j], c, f.neg_step_size, f.bias_correction2_sqrt);
}

}  // namespace

void adam_step(TensorView param, ConstTensorView grad, TensorView m, TensorView v, const AdamHyper& h,
               std::int64_t step) {
  const detail::AdamConstants c(h);
  const detail::AdamStepFactors f(h, step);
  for_rows(param.rows, param.cols, [&](std::int64_t i) {
    adam_row(param.row(i), grad.row(i), m.row(i), v.row(i), param.cols, c, f);
  });
}

void adam_step_rows(TensorView param, ConstTensorView grad, TensorView m, TensorView v, IndexView rows,
                    const std::int64_t* steps, const AdamHyper& h) {
  const detail::AdamConstants c(h);
  for_rows(rows.size, param.cols, [&](std::int64_t k) {
    const std::int64_t i = rows.data[k];
    adam_row(param.row(i), grad.row(i), m.row(i), v.row(i), param.cols, c, detail::AdamStepFactors(h, steps[k]));
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
