// Helpers for the kernel tests: random host tensors, NaN-poisoned outputs, strided windows,
// conversion to the double references, comparisons, and running a block at a given thread count.
#pragma once

#include <omp.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "graph/base/random.hpp"
#include "kernels/tensor.hpp"
#include "tests/reference/naive_kernels.hpp"

namespace halo::test {

// A host tensor of rows x cols, uniform in [lo, hi).
inline kernels::Tensor random_tensor(RandomStream& rng, std::int64_t rows, std::int64_t cols, double lo = -1.0,
                                     double hi = 1.0) {
  std::vector<float> values(static_cast<std::size_t>(rows * cols));
  for (float& v : values) v = static_cast<float>(lo + (hi - lo) * rng.uniform());
  return kernels::Tensor::from_vector(rows, cols, values);
}

// The same from a fresh stream of `seed`.
inline kernels::Tensor random_tensor(std::uint64_t seed, std::int64_t rows, std::int64_t cols) {
  RandomStream rng(seed, 0);
  return random_tensor(rng, rows, cols);
}

// A host tensor full of NaN, for outputs the kernel must overwrite.
inline kernels::Tensor poisoned(std::int64_t rows, std::int64_t cols) {
  return kernels::Tensor::full(rows, cols, std::numeric_limits<float>::quiet_NaN());
}

// A rows x cols window with row stride cols + pad inside a bigger tensor whose padding columns
// hold `pad_value`, so a kernel that reads or writes past the window is caught.
struct Strided {
  kernels::Tensor storage;
  kernels::TensorView view;
  Strided(std::int64_t rows, std::int64_t cols, std::int64_t pad, float pad_value)
      : storage(kernels::Tensor::full(rows, cols + pad, pad_value)) {
    view = {storage.data(), rows, cols, cols + pad, kernels::Device::cpu()};
  }
  // True when every padding value still equals `pad_value` (NaN matches NaN).
  bool padding_intact(float pad_value) const {
    for (std::int64_t i = 0; i < view.rows; ++i)
      for (std::int64_t j = view.cols; j < view.stride; ++j) {
        const float v = storage.data()[i * view.stride + j];
        if (!(v == pad_value || (std::isnan(v) && std::isnan(pad_value)))) return false;
      }
    return true;
  }
};

// A strided copy of `source` (padding filled with `pad_value`).
inline Strided strided_copy(const kernels::Tensor& source, std::int64_t pad, float pad_value = 1e30f) {
  Strided s(source.rows(), source.cols(), pad, pad_value);
  kernels::copy(source.view(), s.view);
  return s;
}

inline Dense to_dense(kernels::ConstTensorView v) {
  Dense d(v.rows, v.cols);
  for (std::int64_t i = 0; i < v.rows; ++i)
    for (std::int64_t j = 0; j < v.cols; ++j) d(i, j) = v.row(i)[j];
  return d;
}

// "" when every value of `actual` is within abs_tol + rel_tol · |expected| of `expected`, else
// the first offending cell (a NaN never passes).
inline std::string difference(kernels::ConstTensorView actual, const Dense& expected, double rel_tol = 1e-5,
                              double abs_tol = 1e-5) {
  if (actual.rows != expected.rows || actual.cols != expected.cols)
    return "shape " + std::to_string(actual.rows) + " x " + std::to_string(actual.cols) + " vs " +
           std::to_string(expected.rows) + " x " + std::to_string(expected.cols);
  for (std::int64_t i = 0; i < actual.rows; ++i)
    for (std::int64_t j = 0; j < actual.cols; ++j) {
      const double a = actual.row(i)[j];
      const double e = expected(i, j);
      if (!(std::fabs(a - e) <= abs_tol + rel_tol * std::fabs(e)))
        return "(" + std::to_string(i) + ", " + std::to_string(j) + "): " + std::to_string(a) + " vs expected " +
               std::to_string(e);
    }
  return {};
}

// True when the two host windows hold bitwise-identical values.
inline bool identical(kernels::ConstTensorView a, kernels::ConstTensorView b) {
  if (a.rows != b.rows || a.cols != b.cols) return false;
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < a.cols; ++j)
      if (std::memcmp(a.row(i) + j, b.row(i) + j, sizeof(float)) != 0) return false;
  return true;
}

// Runs fn() with OpenMP limited to `threads` threads, then restores the previous limit.
template <class F>
void with_threads(int threads, F&& fn) {
  const int previous = omp_get_max_threads();
  omp_set_num_threads(threads);
  try {
    fn();
  } catch (...) {
    omp_set_num_threads(previous);
    throw;
  }
  omp_set_num_threads(previous);
}

// A view of a vector of row ids.
inline kernels::IndexView index_view(const std::vector<std::int64_t>& v) {
  return {v.data(), static_cast<std::int64_t>(v.size())};
}

// `rows` labels drawn uniformly from [0, classes).
inline std::vector<std::int64_t> random_labels(RandomStream& rng, std::int64_t rows, std::int64_t classes) {
  std::vector<std::int64_t> labels(static_cast<std::size_t>(rows));
  for (auto& l : labels) l = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(classes)));
  return labels;
}

}  // namespace halo::test
