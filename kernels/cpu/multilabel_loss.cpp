// CPU sigmoid + binary cross-entropy over the labelled entries of a row subset. Per-row losses
// are summed in double over blocks fixed by the subset size, so the total does not depend on the
// thread count.
#include <cmath>
#include <cstdint>

#include "kernels/cpu/column_reduce.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/detail/loss_mask.hpp"

namespace halo::kernels::cpu {

LossSum sigmoid_bce(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                    TensorView grad) {
  const std::int64_t tasks = logits.cols;
  const bool with_grad = grad.data != nullptr;
  // Distinct rows: each masked row's gradient is written by exactly one thread.
  const std::int64_t labelled =
      detail::check_multilabel_mask("sigmoid_bce", logits.rows, tasks, labels, mask, with_grad);
  if (with_grad) cpu::fill(grad, 0.0f);
  const double total = reduce_rows(mask.size, 1, [&](std::int64_t k, double* acc) {
    const std::int64_t r = mask.data[k];
    const float* z = logits.row(r);
    const std::int64_t* y = labels + r * tasks;
    float* g = with_grad ? grad.row(r) : nullptr;
    for (std::int64_t j = 0; j < tasks; ++j) {
      if (y[j] < 0) continue;
      const double x = z[j];
      const double target = static_cast<double>(y[j]);
      acc[0] += std::fmax(x, 0.0) - x * target + std::log1p(std::exp(-std::fabs(x)));
      if (g != nullptr) g[j] = static_cast<float>((1.0 / (1.0 + std::exp(-x)) - target) * grad_scale);
    }
  })[0];
  return LossSum{total, labelled};
}

}  // namespace halo::kernels::cpu
