// Argument checks shared by the dispatch functions of kernels/*.cpp: well-formed views, shapes,
// one device for all operands, and the aliasing rules.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "graph/base/error.hpp"
#include "kernels/tensor.hpp"

// HALO_EXPECTS for helpers shared by several public functions, where __func__ would name the
// helper: the message starts with `op`, the public function's name.
#define HALO_KERNEL_EXPECTS(op, condition, message)                                      \
  do {                                                                                   \
    if (!(condition)) throw ::halo::InvalidArgument(std::string(op) + ": " + (message)); \
  } while (0)

namespace halo::kernels::detail {

inline std::string dims(std::int64_t rows, std::int64_t cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}
template <class View>
std::string dims(const View& v) {
  return dims(v.rows, v.cols);
}

// Throws InvalidArgument ("op: name ...") unless v is a usable window: non-negative extents,
// stride >= cols, and a data pointer whenever it holds values.
template <class View>
void check_view(const char* op, const char* name, const View& v) {
  if (v.rows < 0 || v.cols < 0)
    throw InvalidArgument(std::string(op) + ": " + name + " has negative extents " + dims(v));
  if (v.stride < v.cols && v.rows > 1)
    throw InvalidArgument(std::string(op) + ": " + name + " has row stride " + std::to_string(v.stride) +
                          ", expected at least its " + std::to_string(v.cols) + " columns");
  if (v.data == nullptr && v.rows > 0 && v.cols > 0)
    throw InvalidArgument(std::string(op) + ": " + name + " (" + dims(v) + ") has no data");
}

// check_view, plus the expected extents.
template <class View>
void check_shape(const char* op, const char* name, const View& v, std::int64_t rows, std::int64_t cols) {
  check_view(op, name, v);
  if (v.rows != rows || v.cols != cols)
    throw InvalidArgument(std::string(op) + ": " + name + " must be " + dims(rows, cols) + ", got " + dims(v));
}

template <class View>
void check_device(const char* op, const char* name, const View& v, const Device& device) {
  if (v.device != device)
    throw InvalidArgument(std::string(op) + ": " + name + " is on " + v.device.to_string() + ", expected " +
                          device.to_string() + " like the other operands");
}

// True when the memory spans of two windows (of any element types) meet: the first element's
// first byte to the last element's end.
template <class A, class B>
bool spans_meet(const A& a, const B& b) {
  if (a.rows == 0 || a.cols == 0 || b.rows == 0 || b.cols == 0) return false;
  // Compared as integers: the views may point into unrelated allocations.
  const auto a_begin = reinterpret_cast<std::uintptr_t>(a.data);
  const auto a_end = reinterpret_cast<std::uintptr_t>(a.data + (a.rows - 1) * a.stride + a.cols);
  const auto b_begin = reinterpret_cast<std::uintptr_t>(b.data);
  const auto b_end = reinterpret_cast<std::uintptr_t>(b.data + (b.rows - 1) * b.stride + b.cols);
  return a_begin < b_end && b_begin < a_end;
}

// True when the two views share an element (for "may not alias" rules). Views of one stride
// (column windows of one tensor, say) are compared exactly, so side-by-side column windows are
// disjoint; otherwise the memory spans they cover are compared.
template <class A, class B>
bool overlaps(const A& a, const B& b) {
  if (!spans_meet(a, b)) return false;
  const auto a_begin = reinterpret_cast<std::uintptr_t>(a.data);
  const auto b_begin = reinterpret_cast<std::uintptr_t>(b.data);
  const std::int64_t stride = a.stride;
  if (b.stride != stride || a.cols > stride || b.cols > stride) return true;
  // b's element (r, c) is a's (r + q, m + c), or (r + q + 1, m + c - stride) past a's row end.
  const auto element = static_cast<std::uintptr_t>(sizeof(*a.data));
  const std::int64_t delta = b_begin >= a_begin ? static_cast<std::int64_t>((b_begin - a_begin) / element)
                                                 : -static_cast<std::int64_t>((a_begin - b_begin) / element);
  const std::int64_t q = delta >= 0 ? delta / stride : -((-delta + stride - 1) / stride);  // floor
  const std::int64_t m = delta - q * stride;
  const auto rows_meet = [&](std::int64_t shift) { return shift < a.rows && shift + b.rows > 0; };
  const auto cols_meet = [&](std::int64_t first, std::int64_t last) {
    return first < a.cols && last > 0 && first < last;
  };
  return (rows_meet(q) && cols_meet(m, std::min(m + b.cols, stride))) ||
         (m + b.cols > stride && rows_meet(q + 1) && cols_meet(0, m + b.cols - stride));
}

// For outputs allowed to alias an input: true when they are the very same window, or disjoint.
template <class A, class B>
bool same_or_disjoint(const A& a, const B& b) {
  return (a.data == b.data && a.stride == b.stride) || !overlaps(a, b);
}

}  // namespace halo::kernels::detail
