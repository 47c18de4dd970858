// roc_auc: per task, the labelled rows' scores sorted, tied scores given their average rank, and
// the area from the positives' rank sum (the Mann-Whitney statistic, which is what
// roc_auc_score's trapezoids add up to).
#include "train/roc_auc.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::train {

namespace {

// The area of one task, or NaN when its labelled rows hold one class only.
double task_auc(const kernels::ConstTensorView& scores, const std::int64_t* labels, kernels::IndexView rows,
                std::int64_t task) {
  std::vector<std::pair<float, bool>> scored;  // (score, positive)
  scored.reserve(static_cast<std::size_t>(rows.size));
  for (std::int64_t k = 0; k < rows.size; ++k) {
    const std::int64_t row = rows.data[k];
    const std::int64_t label = labels[row * scores.cols + task];
    if (label >= 0) scored.emplace_back(scores.data[row * scores.stride + task], label == 1);
  }
  const auto positives = static_cast<double>(
      std::count_if(scored.begin(), scored.end(), [](const std::pair<float, bool>& s) { return s.second; }));
  const double negatives = static_cast<double>(scored.size()) - positives;
  if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
  std::sort(scored.begin(), scored.end());
  double positive_rank_sum = 0;  // 1-based ranks, ties at their average: exact halves in double
  for (std::size_t first = 0; first < scored.size();) {
    std::size_t end = first;
    double tied_positives = 0;
    while (end < scored.size() && scored[end].first == scored[first].first) tied_positives += scored[end++].second;
    positive_rank_sum += tied_positives * (static_cast<double>(first + 1 + end) / 2);
    first = end;
  }
  return (positive_rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

}  // namespace

double roc_auc(kernels::ConstTensorView scores, const std::int64_t* labels, kernels::IndexView rows) {
  HALO_EXPECTS(!scores.device.is_cuda(), "roc_auc reads host scores; copy them from the GPU first");
  const std::int64_t tasks = scores.cols;
  for (std::int64_t k = 0; k < rows.size; ++k) {
    const std::int64_t row = rows.data[k];
    if (row < 0 || row >= scores.rows)
      throw InvalidArgument(
          fmt::format("roc_auc: row {} (entry {}) is outside the {} rows of scores", row, k, scores.rows));
    for (std::int64_t t = 0; t < tasks; ++t) {
      const std::int64_t label = labels[row * tasks + t];
      if (label < -1 || label > 1)
        throw InvalidArgument(
            fmt::format("roc_auc: row {}, task {}: label {} is not 0, 1 or -1 (unlabelled)", row, t, label));
      if (label >= 0 && std::isnan(scores.data[row * scores.stride + t]))
        throw InvalidArgument(fmt::format("roc_auc: row {}, task {}: the score is NaN", row, t));
    }
  }
  std::vector<double> auc(static_cast<std::size_t>(tasks));
  parallel_for(
      0, tasks, [&](std::int64_t t) { auc[static_cast<std::size_t>(t)] = task_auc(scores, labels, rows, t); }, 1);
  double sum = 0;
  std::int64_t defined = 0;
  for (double a : auc) {
    if (std::isnan(a)) continue;
    sum += a;
    ++defined;
  }
  if (defined == 0)
    throw InvalidArgument(
        fmt::format("roc_auc: none of the {} tasks has both classes among the {} rows; ROC-AUC is "
                    "undefined (OGB: no positively labeled data available)",
                    tasks, rows.size));
  return sum / static_cast<double>(defined);
}

}  // namespace halo::train
