// The large host block cache: size classes, the free list of mapped ranges, and the footprint
// bound of host_block_cache.hpp.
#include "kernels/cpu/host_block_cache.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <new>
#include <string>

#include "graph/base/error.hpp"
#include "graph/base/huge_pages.hpp"

namespace halo::kernels::cpu {
namespace {

constexpr std::align_val_t host_alignment{64};
// The header in front of every block holds the block's size (its size class when it is large):
// one alignment unit, so the block after it keeps the 64-byte alignment.
constexpr std::size_t header_bytes = 64;

std::size_t page_bytes() {
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

void write_size(char* header, std::size_t size) { std::memcpy(header, &size, sizeof size); }
std::size_t read_size(const char* header) {
  std::size_t size = 0;
  std::memcpy(&size, header, sizeof size);
  return size;
}

// Fresh anonymous pages (zero, and not backed by memory until first written), or nullptr; laid
// out and advised for transparent huge pages: SpMM gathers rows of these activations at random,
// and with 4 KiB pages nearly every row is a TLB miss (width 64: 18 % faster, 256: 5 %; halo-bench
// spmm, 250 K vertices, 2-core Xeon). The kernel may compact memory to find them when first
// faulted: a 3-layer, 256-wide GCN on that graph takes 1.6 s longer over its first epoch and 5 %
// less time over every later one, when the blocks return from this cache.
char* map_pages(std::size_t size) { return static_cast<char*>(map_huge_pages(size)); }

}  // namespace

HostBlockCache::HostBlockCache(std::size_t min_cached_bytes, std::size_t granularity)
    : min_cached_bytes_(min_cached_bytes), granularity_(granularity) {
  HALO_EXPECTS(min_cached_bytes > 0 && granularity > 0 && granularity % page_bytes() == 0,
               "HostBlockCache: min_cached_bytes must be positive and granularity a positive multiple of the page "
               "size (" + std::to_string(page_bytes()) + "), got " + std::to_string(min_cached_bytes) + " and " +
                   std::to_string(granularity));
}

HostBlockCache::~HostBlockCache() { release_cached(); }

std::size_t HostBlockCache::size_class(std::size_t bytes) const {
  if (bytes > std::numeric_limits<std::size_t>::max() - header_bytes - granularity_) throw std::bad_alloc();
  return (bytes + header_bytes + granularity_ - 1) / granularity_ * granularity_;
}

void* HostBlockCache::allocate(std::size_t bytes) {
  HALO_EXPECTS(bytes > 0, "HostBlockCache::allocate: a block needs at least one byte");
  if (bytes < min_cached_bytes_) {
    auto* header = static_cast<char*>(::operator new(bytes + header_bytes, host_alignment));
    write_size(header, bytes);
    return header + header_bytes;
  }
  const std::size_t size = size_class(bytes);
  const std::lock_guard<std::mutex> lock(mutex_);
  char* start = nullptr;
  const auto fit = cached_.lower_bound(size);
  if (fit != cached_.end()) {
    start = fit->second;
    const std::size_t length = fit->first;
    cached_.erase(fit);
    stats_.cached_bytes -= length;
    // The tail past the block stays cached if a large request could still use it.
    const std::size_t tail = length - size;
    if (tail >= size_class(min_cached_bytes_)) {
      cached_.emplace_hint(cached_.lower_bound(tail), tail, start + size);
      stats_.cached_bytes += tail;
    } else if (tail > 0) {
      unmap_pages(start + size, tail);
    }
    ++stats_.hits;
  } else {
    start = map_without_hit(size);
    ++stats_.misses;
  }
  stats_.live_bytes += size;
  stats_.peak_live_bytes = std::max(stats_.peak_live_bytes, stats_.live_bytes);
  write_size(start, size);
  return start + header_bytes;
}

char* HostBlockCache::map_without_hit(std::size_t size) {
  // Every cached range is shorter than `size`: the longest one is grown, so its pages serve
  // this request and only the rest are new.
  char* grown = nullptr;
  std::size_t grown_length = 0;
  if (!cached_.empty()) {
    const auto longest = std::prev(cached_.end());
    grown = longest->second;
    grown_length = longest->first;
    cached_.erase(longest);
    stats_.cached_bytes -= grown_length;
  }
  evict_for(size);
  if (grown != nullptr) {
    void* moved = mremap(grown, grown_length, size, MREMAP_MAYMOVE);
    if (moved != MAP_FAILED) {
      stats_.fresh_bytes += size - grown_length;
      return static_cast<char*>(moved);
    }
    unmap_pages(grown, grown_length);
  }
  char* start = map_pages(size);
  if (start == nullptr) {
    // Out of memory or of mappings: whatever is cached goes before giving up.
    unmap_cached_locked();
    start = map_pages(size);
    if (start == nullptr) throw std::bad_alloc();
  }
  stats_.fresh_bytes += size;
  return start;
}

void HostBlockCache::release(void* data) noexcept {
  if (data == nullptr) return;
  char* header = static_cast<char*>(data) - header_bytes;
  const std::size_t size = read_size(header);
  if (size < min_cached_bytes_) {
    ::operator delete(header, host_alignment);
    return;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  stats_.live_bytes -= size;
  if (caching_) {
    try {
      // Before the ranges of equal length, so that the next request of this size gets this one.
      cached_.emplace_hint(cached_.lower_bound(size), size, header);
      stats_.cached_bytes += size;
      return;
    } catch (const std::bad_alloc&) {
      // No room to record the range: unmap it instead of keeping it.
    }
  }
  unmap_pages(header, size);
}

void HostBlockCache::evict_for(std::size_t incoming) noexcept {
  const std::size_t peak = std::max(stats_.peak_live_bytes, stats_.live_bytes + incoming);
  while (!cached_.empty() && stats_.live_bytes + stats_.cached_bytes + incoming > peak) {
    const auto longest = std::prev(cached_.end());
    unmap_pages(longest->second, longest->first);
    stats_.cached_bytes -= longest->first;
    cached_.erase(longest);
  }
}

void HostBlockCache::unmap_cached_locked() noexcept {
  for (const auto& [length, start] : cached_) unmap_pages(start, length);
  cached_.clear();
  stats_.cached_bytes = 0;
}

void HostBlockCache::release_cached() noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  unmap_cached_locked();
}

void HostBlockCache::stop_caching() noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  caching_ = false;
  unmap_cached_locked();
}

HostBlockStats HostBlockCache::stats() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace halo::kernels::cpu
