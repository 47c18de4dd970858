// The nearest-class-mean classifier the generator tests use to show that labels are learnable
// from the features.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "datasets/dataset.hpp"

namespace halo::test {

// Accuracy on the test split of the classifier that assigns each vertex the class whose mean
// training feature vector is nearest (squared Euclidean distance; ties go to the lower class).
inline double nearest_class_mean_accuracy(const datasets::Dataset& ds) {
  const datasets::NodeType& t = ds.target();
  const std::int64_t f = t.features.cols(), k = ds.meta.num_classes;
  std::vector<double> mean(static_cast<std::size_t>(k * f), 0.0), count(static_cast<std::size_t>(k), 0.0);
  for (const std::int64_t v : ds.split.train) {
    count[static_cast<std::size_t>(t.labels[v])] += 1;
    for (std::int64_t j = 0; j < f; ++j) mean[static_cast<std::size_t>(t.labels[v] * f + j)] += t.features.row(v)[j];
  }
  for (std::int64_t i = 0; i < k * f; ++i) mean[static_cast<std::size_t>(i)] /= count[static_cast<std::size_t>(i / f)];
  std::int64_t right = 0;
  for (const std::int64_t v : ds.split.test) {
    std::vector<double> distance(static_cast<std::size_t>(k), 0.0);
    for (std::int64_t c = 0; c < k; ++c)
      for (std::int64_t j = 0; j < f; ++j) {
        const double d = t.features.row(v)[j] - mean[static_cast<std::size_t>(c * f + j)];
        distance[static_cast<std::size_t>(c)] += d * d;
      }
    right += std::min_element(distance.begin(), distance.end()) - distance.begin() == t.labels[v];
  }
  return static_cast<double>(right) / static_cast<double>(ds.split.test.size());
}

}  // namespace halo::test
