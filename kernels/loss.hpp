// Log-softmax + negative log-likelihood over a vertex subset, and accuracy.
#pragma once

#include <cstdint>

#include "kernels/tensor.hpp"

namespace halo::kernels {

struct LossSum {
  double loss_sum = 0.0;   // Σ over the masked rows of -log softmax(logits_i)[label_i]
  std::int64_t count = 0;  // rows in the mask (all-reducible with loss_sum across ranks)
};

// For the rows listed in `mask` (labels[row] in [0, cols)): the summed NLL of log-softmax. When
// grad.data is not null, also writes d(loss)/d(logits) · grad_scale into grad for the masked rows
// and 0 elsewhere (grad has the shape of logits). For the mean loss pass grad_scale = 1 / count
// (the global count when distributed). Numerically stable (max-shifted), accumulates in double.
// With grad, the masked rows must be distinct (each row's gradient is written, not added).
// Out-of-range rows or labels throw InvalidArgument. The sum does not depend on the threads.
LossSum log_softmax_nll(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                        TensorView grad);

// Number of masked rows whose arg-max (lowest index among ties) equals the label.
std::int64_t count_correct(ConstTensorView logits, const std::int64_t* labels, IndexView mask);

}  // namespace halo::kernels
