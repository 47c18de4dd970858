// CPU log-softmax + NLL and accuracy over a row subset. Per-row losses are summed in double over
// blocks fixed by the subset size, so the total does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "graph/base/parallel.hpp"
#include "kernels/cpu/column_reduce.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/detail/loss_mask.hpp"

namespace halo::kernels::cpu {

LossSum log_softmax_nll(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                        TensorView grad) {
  const std::int64_t classes = logits.cols;
  const bool with_grad = grad.data != nullptr;
  // Distinct rows: each masked row's gradient is written by exactly one thread.
  detail::check_loss_mask("log_softmax_nll", logits.rows, classes, labels, mask, with_grad);
  if (with_grad) cpu::fill(grad, 0.0f);
  const double total = reduce_rows(mask.size, 1, [&](std::int64_t k, double* acc) {
    // The row's exp(z_j - max) once: the sum needs them, and the softmax is them over the sum.
    thread_local std::vector<double> e;
    e.resize(static_cast<std::size_t>(classes));
    const std::int64_t r = mask.data[k];
    const float* z = logits.row(r);
    float shift = z[0];
    for (std::int64_t j = 1; j < classes; ++j) shift = std::max(shift, z[j]);
    double sum = 0.0;
    for (std::int64_t j = 0; j < classes; ++j) {
      e[static_cast<std::size_t>(j)] = std::exp(static_cast<double>(z[j]) - shift);
      sum += e[static_cast<std::size_t>(j)];
    }
    acc[0] += std::log(sum) - (static_cast<double>(z[labels[r]]) - shift);
    if (with_grad) {
      float* g = grad.row(r);
      const double inverse = 1.0 / sum;
      for (std::int64_t j = 0; j < classes; ++j) {
        const double softmax = e[static_cast<std::size_t>(j)] * inverse;
        g[j] = static_cast<float>((softmax - (j == labels[r] ? 1.0 : 0.0)) * grad_scale);
      }
    }
  })[0];
  return LossSum{total, mask.size};
}

std::int64_t count_correct(ConstTensorView logits, const std::int64_t* labels, IndexView mask) {
  detail::check_loss_mask("count_correct", logits.rows, logits.cols, labels, mask, false);
  const double correct = reduce_rows(mask.size, 1, [&](std::int64_t k, double* acc) {
    const std::int64_t r = mask.data[k];
    const float* z = logits.row(r);
    std::int64_t best = 0;
    for (std::int64_t j = 1; j < logits.cols; ++j)
      if (z[j] > z[best]) best = j;
    if (best == labels[r]) acc[0] += 1.0;
  })[0];
  return static_cast<std::int64_t>(correct);
}

}  // namespace halo::kernels::cpu
