// Host memory of CPU tensors: 64-byte aligned blocks (one cache line, one AVX-512 vector), and
// parallel strided copies and fills.
#include <algorithm>
#include <cstring>
#include <new>

#include "graph/base/parallel.hpp"
#include "kernels/cpu/cpu_kernels.hpp"

namespace halo::kernels::cpu {

namespace {
constexpr std::align_val_t host_alignment{64};
// Rows per parallel chunk: about 256 KiB of floats, so small tensors are copied by one thread.
std::int64_t rows_per_chunk(std::int64_t cols) {
  return std::max<std::int64_t>(1, (64 << 10) / std::max<std::int64_t>(cols, 1));
}
}  // namespace

void* allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  return ::operator new(bytes, host_alignment);
}

void release(void* data) noexcept {
  if (data != nullptr) ::operator delete(data, host_alignment);
}

void copy(ConstTensorView source, TensorView destination) {
  if (source.rows == 0 || source.cols == 0) return;
  if (source.data == destination.data && (source.stride == destination.stride || source.rows == 1)) return;
  const std::size_t row_bytes = static_cast<std::size_t>(source.cols) * sizeof(float);
  parallel_for_ranges(
      0, source.rows,
      [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t r = begin; r < end; ++r) std::memcpy(destination.row(r), source.row(r), row_bytes);
      },
      rows_per_chunk(source.cols));
}

void fill(TensorView x, float value) {
  parallel_for_ranges(
      0, x.rows,
      [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t r = begin; r < end; ++r) std::fill(x.row(r), x.row(r) + x.cols, value);
      },
      rows_per_chunk(x.cols));
}

}  // namespace halo::kernels::cpu
