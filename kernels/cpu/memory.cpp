// Host memory of CPU tensors: 64-byte aligned blocks (one cache line, one AVX-512 vector), the
// large ones recycled through a HostBlockCache, and parallel strided copies and fills.
#include <algorithm>
#include <cstring>

#include "graph/base/parallel.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/host_block_cache.hpp"

namespace halo::kernels::cpu {

namespace {
// Rows per parallel chunk: about 256 KiB of floats, so small tensors are copied by one thread.
std::int64_t rows_per_chunk(std::int64_t cols) {
  return std::max<std::int64_t>(1, (64 << 10) / std::max<std::int64_t>(cols, 1));
}

// Training allocates and frees the same large activations and gradients every epoch; from
// operator new they are fresh mmaps each time, faulted in page by page and unmapped again. The
// cache keeps them instead, within the peak of what was live at once.
HostBlockCache& host_blocks() {
  // Never destroyed, so that a tensor released during static destruction (in whatever order)
  // still finds it; its cached blocks are freed at exit by `drain_at_exit` below.
  static HostBlockCache* const cache = new HostBlockCache();
  return *cache;
}

struct DrainAtExit {
  ~DrainAtExit() { host_blocks().stop_caching(); }
};
const DrainAtExit drain_at_exit;

}  // namespace

void* allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  return host_blocks().allocate(bytes);
}

void release(void* data) noexcept {
  if (data != nullptr) host_blocks().release(data);
}

void release_cached_host_memory() noexcept { host_blocks().release_cached(); }

void stop_keeping_host_blocks() noexcept { host_blocks().stop_caching(); }

HostBlockStats host_block_stats() { return host_blocks().stats(); }

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
