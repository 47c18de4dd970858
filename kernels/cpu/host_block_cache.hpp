// A cache of large host memory blocks for CPU tensors, so that the activations and gradients
// freed in one epoch are handed out again in the next instead of being unmapped and faulted in
// afresh, page by page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace halo::kernels::cpu {

// Counters of a HostBlockCache. Bytes are those of the size classes (requests rounded up) of the
// large blocks; small blocks are not counted.
struct HostBlockStats {
  std::size_t live_bytes = 0;       // handed out and not released yet
  std::size_t cached_bytes = 0;     // released and kept, mapped, for reuse
  std::size_t peak_live_bytes = 0;  // the most live_bytes ever reached
  std::size_t fresh_bytes = 0;      // new pages mapped so far (each is faulted in when first written)
  std::int64_t hits = 0;            // large requests served from cached pages alone
  std::int64_t misses = 0;          // large requests that needed new pages
};

// 64-byte aligned host blocks. Requests below `min_cached_bytes` go straight to the aligned
// operator new / delete. A larger request, plus a 64-byte header, is rounded up to a multiple of
// `granularity` (its size class, a multiple of the page size) and served by an anonymous mapping
// of that size; released, the mapping is kept, pages and all, in a free list ordered by size:
//   - a request takes the smallest cached range that holds it (the most recently released first
//     among equal sizes, so a tensor freed in one epoch is the one handed out in the next); a
//     longer range is cut, and its tail stays cached when it could still serve a large request;
//   - when no cached range is long enough, the longest one is grown (mremap) to the request, so
//     only the pages it lacks are new;
//   - before mapping new pages, cached ranges are unmapped, longest first, until
//     live + cached + the request <= the peak of live bytes (raised to include this request).
// So live_bytes + cached_bytes never exceeds peak_live_bytes: the cache only ever holds memory
// the program once had in use at the same time. Each cached range lies within one kernel
// mapping (ranges are only cut, grown or unmapped, never joined), as mremap requires.
//
// Thread safe (one mutex around the large-block bookkeeping; the small-block path takes no lock).
// Every block stores its size in a 64-byte header in front of it, so release needs only the
// pointer; a block must be released to the cache that allocated it. Linux only (mremap).
class HostBlockCache {
 public:
  static constexpr std::size_t default_min_cached_bytes = std::size_t{1} << 20;
  static constexpr std::size_t default_granularity = std::size_t{64} << 10;

  explicit HostBlockCache(std::size_t min_cached_bytes = default_min_cached_bytes,
                          std::size_t granularity = default_granularity);
  // Unmaps the cached ranges. Blocks still live at that point must not be released afterwards.
  ~HostBlockCache();
  HostBlockCache(const HostBlockCache&) = delete;
  HostBlockCache& operator=(const HostBlockCache&) = delete;

  // A block of at least `bytes` (> 0) bytes, 64-byte aligned, uninitialised (a reused block holds
  // whatever its previous owner wrote). O(log cached ranges), plus a system call when pages are
  // mapped, grown or unmapped. Throws std::bad_alloc when the memory cannot be had.
  void* allocate(std::size_t bytes);
  // Gives back a block from allocate(); a large one is kept for reuse unless caching stopped.
  void release(void* data) noexcept;
  // Unmaps every cached range (live blocks are untouched); the cache fills again with later
  // releases.
  void release_cached() noexcept;
  // release_cached(), and from now on releases unmap their block at once: for the end of the
  // program, when nothing will be reused.
  void stop_caching() noexcept;
  HostBlockStats stats() const;

 private:
  std::size_t size_class(std::size_t bytes) const;
  // A mapping of `size` bytes for a request that no cached range holds. Needs mutex_.
  char* map_without_hit(std::size_t size);
  // Unmaps cached ranges, longest first, until live + cached + incoming <= peak. Needs mutex_.
  void evict_for(std::size_t incoming) noexcept;
  void unmap_cached_locked() noexcept;

  const std::size_t min_cached_bytes_;
  const std::size_t granularity_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, char*> cached_;  // length -> start of a released range
  HostBlockStats stats_;
  bool caching_ = true;
};

}  // namespace halo::kernels::cpu
