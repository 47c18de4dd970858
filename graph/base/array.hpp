// Array<T>: a typed 1-D or 2-D (row-major) host array over a Buffer, so it may own heap memory or
// map a file read-only. The element types are the ones halo stores on disk: float, double,
// int32, int64, uint8 and bool.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graph/base/buffer.hpp"
#include "graph/base/error.hpp"

namespace halo {

template <class T>
class Array {
  static_assert(std::is_trivially_copyable_v<T>, "Array holds plain values");

 public:
  Array() = default;

  // Uninitialised 1-D array of n values / 2-D array of rows x cols values.
  static Array vector(std::int64_t n) { return Array(Buffer::allocate(bytes_for(n, 1)), n, 1, 1); }
  static Array matrix(std::int64_t rows, std::int64_t cols) {
    return Array(Buffer::allocate(bytes_for(rows, cols)), rows, cols, 2);
  }
  // 1-D array holding a copy of `values`.
  static Array from_vector(const std::vector<T>& values) {
    Array a = vector(static_cast<std::int64_t>(values.size()));
    if (!values.empty()) std::memcpy(a.data(), values.data(), values.size() * sizeof(T));
    return a;
  }
  // Wraps a buffer holding exactly rows * cols values; ndim is 1 (cols must be 1) or 2.
  static Array from_buffer(Buffer buffer, std::int64_t rows, std::int64_t cols, int ndim) {
    HALO_EXPECTS(ndim == 1 || ndim == 2, "ndim must be 1 or 2, got " + std::to_string(ndim));
    HALO_EXPECTS(ndim == 2 || cols == 1, "a 1-D array has one column");
    HALO_EXPECTS(buffer.size() == bytes_for(rows, cols),
                 "buffer holds " + std::to_string(buffer.size()) + " bytes, expected " +
                     std::to_string(bytes_for(rows, cols)));
    return Array(std::move(buffer), rows, cols, ndim);
  }

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t size() const { return rows_ * cols_; }
  int ndim() const { return ndim_; }
  bool empty() const { return size() == 0; }
  std::size_t bytes() const { return buffer_.size(); }
  bool is_mapped() const { return buffer_.is_mapped(); }

  T* data() { return static_cast<T*>(buffer_.data()); }
  const T* data() const { return static_cast<const T*>(buffer_.data()); }
  T* begin() { return data(); }
  T* end() { return data() + size(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }
  T& operator[](std::int64_t i) { return data()[i]; }
  const T& operator[](std::int64_t i) const { return data()[i]; }
  // Row r of a 2-D array.
  const T* row(std::int64_t r) const { return data() + r * cols_; }
  T* row(std::int64_t r) { return data() + r * cols_; }

  const Buffer& buffer() const { return buffer_; }
  Buffer release() && { return std::move(buffer_); }
  // A writable heap copy (use on a mapped array before modifying it).
  Array clone() const { return Array(buffer_.clone(), rows_, cols_, ndim_); }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

 private:
  Array(Buffer buffer, std::int64_t rows, std::int64_t cols, int ndim)
      : buffer_(std::move(buffer)), rows_(rows), cols_(cols), ndim_(ndim) {}
  static std::size_t bytes_for(std::int64_t rows, std::int64_t cols) {
    HALO_EXPECTS(rows >= 0 && cols >= 0, "array extents must be non-negative, got " +
                                             std::to_string(rows) + " x " + std::to_string(cols));
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(T);
  }

  Buffer buffer_;
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 1;
  int ndim_ = 1;
};

}  // namespace halo
