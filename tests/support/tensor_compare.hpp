// Bit-for-bit comparison of tensors (and of float vectors read back from them), and a copy of a
// tensor's row range, for tests of determinism and of results that must not change by a bit.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/tensor.hpp"

namespace halo::test {

// True when a and b have the same length and the same bytes (-0.0 differs from 0.0).
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}
inline bool same_bits(const kernels::Tensor& a, const kernels::Tensor& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && same_bits(a.to_vector(), b.to_vector());
}

// Rows [begin, end) of the host tensor t, as a tensor of their own.
inline kernels::Tensor rows_of(const kernels::Tensor& t, std::int64_t begin, std::int64_t end) {
  kernels::Tensor out = kernels::Tensor::empty(end - begin, t.cols());
  kernels::copy(t.view().slice_rows(begin, end), out.view());
  return out;
}

}  // namespace halo::test
