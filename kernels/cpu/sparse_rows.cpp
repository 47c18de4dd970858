// CPU twins of the row-sparse Adam's kernels (kernels/optimizer_ops.hpp: accumulate_row_grad,
// adam_step_touched, clear_touched): one pass over the rows, each row's flag, count and values
// handled by the thread that owns the row, so nothing depends on the thread count.
#include <algorithm>
#include <cstdint>

#include "graph/base/parallel.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/row_loop.hpp"
#include "kernels/detail/adam_update.hpp"

namespace halo::kernels::cpu {
void accumulate_row_grad(ConstTensorView grad_all, TensorView grad, std::uint8_t* touched) {
  for_rows(grad.rows, grad.cols, [&](std::int64_t i) {
    const float* a = grad_all.row(i);
    float* g = grad.row(i);
    bool nonzero = false;
    for (std::int64_t j = 0; j < grad.cols; ++j) {
      g[j] += a[j];
      nonzero = nonzero || a[j] != 0.0f;
    }
    if (nonzero) touched[i] = 1;
  });
}

void adam_step_touched(TensorView param, TensorView grad, TensorView m, TensorView v, std::uint8_t* touched,
                       std::int64_t* steps, const AdamHyper& h) {
  const detail::AdamConstants c(h);
  for_rows(param.rows, param.cols, [&](std::int64_t i) {
    if (touched[i] == 0) return;
    const detail::AdamStepFactors f(h, ++steps[i]);
    float* p = param.row(i);
    float* g = grad.row(i);
    float* mi = m.row(i);
    float* vi = v.row(i);
    for (std::int64_t j = 0; j < param.cols; ++j) {
      detail::adam_update(p[j], g[j], mi[j], vi[j], c, f.neg_step_size, f.bias_correction2_sqrt);
      g[j] = 0.0f;
    }
    touched[i] = 0;
  });
}

void clear_touched(TensorView grad, std::uint8_t* touched) {
  for_rows(grad.rows, grad.cols, [&](std::int64_t i) {
    if (touched[i] == 0) return;
    std::fill(grad.row(i), grad.row(i) + grad.cols, 0.0f);
    touched[i] = 0;
  });
}

}  // namespace halo::kernels::cpu
