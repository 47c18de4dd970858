// Reading back what a run predicted (train::TrainConfig::predictions_dir: y_pred.npy, OGB's
// layout) and scoring it on a split, as OGB's evaluators would: the tests compare that score with
// the one the trainer reported for the epoch the predictions are of.
#pragma once

#include <cstdint>
#include <string>

#include "datasets/npy.hpp"
#include "graph/base/array.hpp"
#include "kernels/tensor.hpp"
#include "train/roc_auc.hpp"

namespace halo::test {

// The classes of y_pred.npy (int64, rows x 1).
inline Array<std::int64_t> read_predicted_classes(const std::string& path) {
  return datasets::read_npy<std::int64_t>(path);
}

// The fraction of `rows` whose predicted class is their label.
inline double predicted_accuracy(const Array<std::int64_t>& classes, const std::int64_t* labels,
                                 kernels::IndexView rows) {
  std::int64_t correct = 0;
  for (std::int64_t k = 0; k < rows.size; ++k) correct += classes[rows.data[k]] == labels[rows.data[k]];
  return static_cast<double>(correct) / static_cast<double>(rows.size);
}

// OGB's ROC-AUC of a multi-label task's y_pred.npy (float32, rows x tasks) on `rows`.
inline double predicted_roc_auc(const std::string& path, const std::int64_t* labels, kernels::IndexView rows) {
  const Array<float> scores = datasets::read_npy<float>(path);
  return train::roc_auc({scores.data(), scores.rows(), scores.cols(), scores.cols(), kernels::Device::cpu()}, labels,
                        rows);
}

}  // namespace halo::test
