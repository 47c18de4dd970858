// Multi-label loss (ogbn-proteins: 112 binary tasks per vertex): the sigmoid and binary
// cross-entropy of every labelled (vertex, task) entry, PyTorch's BCEWithLogitsLoss, on the CPU or
// a GPU. The ROC-AUC that evaluates these logits is train/roc_auc.hpp.
#pragma once

#include <cstdint>

#include "kernels/loss.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels {

// For the rows listed in `mask`, over the tasks (columns of logits) whose label is 0 or 1
// (labels: host, logits.rows x logits.cols row-major; -1 = unlabelled, skipped):
//   loss_sum = Σ max(z, 0) - z·y + log(1 + e^-|z|)   (stable for every z), count = such entries.
// With grad (logits' shape and device; the masked rows distinct), writes (σ(z) - y) · grad_scale
// on those entries and 0 everywhere else; pass grad_scale = 1 / count (the global count when
// distributed) for the mean. InvalidArgument naming the first row out of range, a repeated row
// with grad, or a label other than -1, 0, 1. Per-row sums in double, added in a fixed order: the
// total does not depend on the threads. Cost: O(rows · tasks), one pass.
LossSum sigmoid_bce(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                    TensorView grad);

}  // namespace halo::kernels
