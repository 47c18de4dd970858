// Bit-for-bit comparison of Arrays, for tests of determinism and of lossless round trips.
#pragma once

#include <cstring>

#include "graph/base/array.hpp"

namespace halo::test {

// True when a and b have the same shape and the same bytes (so -0.0 differs from 0.0, and a NaN
// equals only a NaN with the same bits).
template <class T>
bool same_array(const Array<T>& a, const Array<T>& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.bytes()) == 0);
}

}  // namespace halo::test
