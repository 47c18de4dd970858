// OGB's ROC-AUC evaluator (ogb.nodeproppred.Evaluator with eval_metric "rocauc", ogbn-proteins):
// per task, the area under the ROC curve of the scores of the rows labelled 0 or 1, as
// sklearn.metrics.roc_auc_score computes it (tied scores count half); tasks whose labelled rows hold
// one class only are skipped, as OGB skips them; the result is the mean over the other tasks.
#pragma once

#include <cstdint>

#include "kernels/tensor.hpp"

namespace halo::train {

// scores: logits (or probabilities: only their order matters) of logits.rows x tasks, row-major;
// labels: rows x tasks, each 0, 1 or -1 (unlabelled, skipped); rows: the rows to evaluate (a
// split). Throws InvalidArgument naming the row and task of a label other than -1, 0 or 1 or a
// score that is NaN, of a row out of range, and when no task has both classes among the rows
// (OGB: "No positively labeled data available. Cannot compute ROC-AUC."). O(R log R) per task
// (R = rows), the tasks in parallel; the result does not depend on the thread count (ranks and
// sums of integers, exact in double).
double roc_auc(kernels::ConstTensorView scores, const std::int64_t* labels, kernels::IndexView rows);

}  // namespace halo::train
