// CPU log-softmax + NLL and accuracy over a row subset. Per-row losses are summed in double over
// blocks fixed by the subset size, so the total does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/base/parallel.hpp"
#include "kernels/cpu/column_reduce.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/vector_exp.hpp"
#include "kernels/detail/loss_mask.hpp"

namespace halo::kernels::cpu {
namespace {

// Lanes of the row's partial maxima and sums: each lane takes every lanes-th class, and the
// lanes are combined in a fixed tree, so a row's result depends on its values only (not on the
// threads or the machine's vector width) and the loops vectorise without reassociation.
constexpr std::int64_t lanes = 8;

// The row's largest logit.
inline float row_max(const float* __restrict z, std::int64_t classes) {
  float part[lanes];
  for (std::int64_t q = 0; q < lanes; ++q) part[q] = z[0];
  std::int64_t j = 0;
  for (; j + lanes <= classes; j += lanes)
    for (std::int64_t q = 0; q < lanes; ++q) part[q] = part[q] < z[j + q] ? z[j + q] : part[q];
  for (; j < classes; ++j) part[0] = part[0] < z[j] ? z[j] : part[0];
  return std::max(std::max(std::max(part[0], part[1]), std::max(part[2], part[3])),
                  std::max(std::max(part[4], part[5]), std::max(part[6], part[7])));
}

// e[j] = e^(z[j] - shift) for the row's classes; returns their sum.
inline double shifted_exponentials(const float* __restrict z, float shift, std::int64_t classes,
                                   double* __restrict e) {
  for (std::int64_t j = 0; j < classes; ++j) e[j] = vector_exp(static_cast<double>(z[j]) - shift);
  double part[lanes] = {};
  std::int64_t j = 0;
  for (; j + lanes <= classes; j += lanes)
    for (std::int64_t q = 0; q < lanes; ++q) part[q] += e[j + q];
  for (; j < classes; ++j) part[0] += e[j];
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

// One row of log_softmax_nll: returns its NLL, and with g writes its gradient
// g[j] = (e[j] / sum - [j == label]) · grad_scale. e: scratch for the row's exponentials.
// Compiled for AVX-512, AVX2 and the baseline, picked once at load time by the CPU it runs on (as
// the SpMM's row loop is): the clones may round differently (fused multiply-add), but one machine
// always runs the same one.
__attribute__((target_clones("avx512f", "avx2", "default"))) double row_nll(
    const float* __restrict z, std::int64_t classes, std::int64_t label, float grad_scale, double* __restrict e,
    float* __restrict g) {
  const float shift = row_max(z, classes);
  const double sum = shifted_exponentials(z, shift, classes, e);
  if (g != nullptr) {
    const double inverse = 1.0 / sum;
    for (std::int64_t j = 0; j < classes; ++j)
      g[j] = static_cast<float>((e[j] * inverse - (j == label ? 1.0 : 0.0)) * grad_scale);
  }
  return std::log(sum) - (static_cast<double>(z[label]) - shift);
}

}  // namespace

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
    acc[0] += row_nll(logits.row(r), classes, labels[r], grad_scale, e.data(), with_grad ? grad.row(r) : nullptr);
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
