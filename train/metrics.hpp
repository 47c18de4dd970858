// Summary statistics of training runs: the mean, the sample standard deviation and the median
// that halo-train reports over runs and over epochs.
#pragma once

#include <vector>

namespace halo::train {

// Arithmetic mean; NaN for an empty list. O(n), deterministic (summed in order).
double mean(const std::vector<double>& values);

// Sample standard deviation (divides by n - 1, as numpy.std(ddof=1) and torch.std do, which is
// what OGB's and PyG's "mean ± std over runs" use); 0 for fewer than two values. O(n).
double sample_std(const std::vector<double>& values);

// Median (the mean of the two middle values for an even count); NaN for an empty list.
// O(n log n).
double median(std::vector<double> values);

}  // namespace halo::train
