// Tests of kernels/cpu/host_block_cache.* and the host allocation of kernels/cpu/memory.cpp: a
// released large block comes back for its size class, a shorter request takes the front of a
// cached range and a longer one grows it (keeping the pages: what was written there is still
// there), live blocks never alias, the cache stays under the peak of live bytes, small blocks
// bypass it, and every block is 64-byte aligned.
#include "kernels/cpu/host_block_cache.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "graph/base/random.hpp"
#include "kernels/cpu/cpu_kernels.hpp"

using namespace halo;
using namespace halo::kernels::cpu;

namespace {

constexpr std::size_t mib = std::size_t{1} << 20;
constexpr std::size_t kib64 = std::size_t{64} << 10;

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// A request whose size class (request + 64-byte header, rounded up to 64 KiB) is exactly m MiB.
std::size_t whole_mib(std::size_t m) { return m * mib - 64; }

// Fills a block with words that name it, and checks them.
void stamp(void* block, std::size_t bytes, std::uint32_t tag) {
  auto* words = static_cast<std::uint32_t*>(block);
  for (std::size_t k = 0; k < bytes / 4; ++k) words[k] = tag * 2654435761u + static_cast<std::uint32_t>(k);
}
bool has_stamp(const void* block, std::size_t bytes, std::uint32_t tag) {
  const auto* words = static_cast<const std::uint32_t*>(block);
  for (std::size_t k = 0; k < bytes / 4; ++k)
    if (words[k] != tag * 2654435761u + static_cast<std::uint32_t>(k)) return false;
  return true;
}

struct Live {
  void* block;
  std::size_t bytes;
  std::uint32_t tag;
};

}  // namespace

TEST_CASE("a released large block is handed out again for a request of the same size class", "[kernels]") {
  HostBlockCache cache;
  void* first = cache.allocate(3 * mib + 100);
  stamp(first, 3 * mib + 100, 1);
  cache.release(first);
  CHECK(cache.stats().cached_bytes == 3 * mib + kib64);
  // 3 MiB + 5 rounds up to the same 64 KiB multiple as 3 MiB + 100.
  void* again = cache.allocate(3 * mib + 5);
  CHECK(again == first);
  CHECK(has_stamp(again, 3 * mib + 5, 1));
  const HostBlockStats s = cache.stats();
  CHECK(s.hits == 1);
  CHECK(s.misses == 1);
  CHECK(s.live_bytes == 3 * mib + kib64);
  CHECK(s.cached_bytes == 0);
  // Of two released blocks of one size, the later one comes back first.
  void* other = cache.allocate(3 * mib);
  cache.release(other);
  cache.release(again);
  CHECK(cache.allocate(3 * mib) == again);
  CHECK(cache.allocate(3 * mib) == other);
  cache.release(again);
  cache.release(other);
}

TEST_CASE("live blocks of mixed sizes never overlap, through reuse, cutting, growth and eviction", "[kernels]") {
  HostBlockCache cache;
  RandomStream rng(71, 0);
  std::vector<Live> live;
  std::uint32_t next_tag = 1;
  for (int step = 0; step < 120; ++step) {
    if (!live.empty() && rng.below(5) < 2) {
      const auto k = static_cast<std::size_t>(rng.below(live.size()));
      REQUIRE(has_stamp(live[k].block, live[k].bytes, live[k].tag));
      cache.release(live[k].block);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      // Four size classes (1, 1.5, 2, 3 MiB), some requests short of the class, and small ones.
      const std::size_t sizes[] = {mib, mib + mib / 2 - 7, 2 * mib, 3 * mib - 64, 4096 + 12};
      const std::size_t bytes = sizes[rng.below(5)];
      void* block = cache.allocate(bytes);
      stamp(block, bytes, next_tag);
      live.push_back({block, bytes, next_tag++});
    }
    for (const Live& l : live) REQUIRE(has_stamp(l.block, l.bytes, l.tag));
  }
  std::sort(live.begin(), live.end(), [](const Live& a, const Live& b) { return address(a.block) < address(b.block); });
  for (std::size_t k = 1; k < live.size(); ++k)
    CHECK(address(live[k - 1].block) + live[k - 1].bytes <= address(live[k].block));
  for (const Live& l : live) cache.release(l.block);
  CHECK(cache.stats().live_bytes == 0);
}

TEST_CASE("cached plus live bytes never exceed the peak of live bytes", "[kernels]") {
  HostBlockCache cache;
  RandomStream rng(72, 0);
  std::vector<std::pair<void*, std::size_t>> live;  // block, size class
  std::size_t live_bytes = 0, peak = 0;             // kept here from the size classes, independently
  for (int step = 0; step < 400; ++step) {
    if (!live.empty() && rng.below(2) == 0) {
      const auto k = static_cast<std::size_t>(rng.below(live.size()));
      cache.release(live[k].first);
      live_bytes -= live[k].second;
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      // Six sizes in MiB, each exactly or a little over: a dozen size classes.
      const std::size_t bytes = mib * static_cast<std::size_t>(1 + rng.below(6)) +
                                (rng.below(2) == 0 ? 0 : static_cast<std::size_t>(rng.below(kib64)));
      const std::size_t size_class = (bytes + 64 + kib64 - 1) / kib64 * kib64;
      live.emplace_back(cache.allocate(bytes), size_class);
      live_bytes += size_class;
      peak = std::max(peak, live_bytes);
    }
    const HostBlockStats s = cache.stats();
    CAPTURE(step);
    REQUIRE(s.live_bytes == live_bytes);
    REQUIRE(s.peak_live_bytes == peak);
    REQUIRE(s.live_bytes + s.cached_bytes <= s.peak_live_bytes);
  }
  for (const auto& entry : live) cache.release(entry.first);
  const HostBlockStats s = cache.stats();
  CHECK(s.hits > 0);
  CHECK(s.cached_bytes <= s.peak_live_bytes);
}

TEST_CASE("a shorter request takes the front of the smallest cached range that holds it", "[kernels]") {
  HostBlockCache cache;
  void* a = cache.allocate(whole_mib(4));
  void* b = cache.allocate(whole_mib(3));
  stamp(b, whole_mib(3), 2);
  cache.release(a);
  cache.release(b);  // cached: 4 and 3 MiB; peak 7 MiB
  // 2 MiB: the 3 MiB range is the smallest that holds it. Its 1 MiB tail is too short for any
  // large request (1 MiB + header) and is unmapped.
  void* c = cache.allocate(whole_mib(2));
  CHECK(c == b);
  CHECK(has_stamp(c, whole_mib(2), 2));  // the same pages, not fresh ones
  const HostBlockStats s = cache.stats();
  CHECK(s.hits == 1);
  CHECK(s.misses == 2);
  CHECK(s.live_bytes == 2 * mib);
  CHECK(s.cached_bytes == 4 * mib);
  CHECK(s.fresh_bytes == 7 * mib);
  cache.release(c);
}

TEST_CASE("a longer request grows the longest cached range, unmapping others to stay under the peak",
          "[kernels]") {
  HostBlockCache cache;
  void* a = cache.allocate(whole_mib(3));
  void* b = cache.allocate(whole_mib(2));
  stamp(a, whole_mib(3), 1);
  cache.release(a);
  cache.release(b);  // cached: 3 and 2 MiB; peak 5 MiB
  // 4 MiB: no range holds it. The 3 MiB one grows by 1 MiB of new pages; keeping the 2 MiB one
  // too would make 6 MiB, past the peak, so it is unmapped.
  void* c = cache.allocate(whole_mib(4));
  CHECK(has_stamp(c, whole_mib(3), 1));  // a's pages, wherever the kernel placed them
  HostBlockStats s = cache.stats();
  CHECK(s.misses == 3);
  CHECK(s.hits == 0);
  CHECK(s.fresh_bytes == 6 * mib);
  CHECK(s.live_bytes == 4 * mib);
  CHECK(s.cached_bytes == 0);
  CHECK(s.peak_live_bytes == 5 * mib);
  stamp(c, whole_mib(4), 3);
  CHECK(has_stamp(c, whole_mib(4), 3));
  cache.release(c);
  cache.release_cached();
  s = cache.stats();
  CHECK(s.cached_bytes == 0);
  CHECK(s.live_bytes == 0);
}

TEST_CASE("blocks under 1 MiB bypass the cache", "[kernels]") {
  HostBlockCache cache;
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{4096}, mib - 1}) {
    void* block = cache.allocate(bytes);
    stamp(block, bytes, 3);
    CHECK(has_stamp(block, bytes, 3));
    cache.release(block);
  }
  const HostBlockStats s = cache.stats();
  CHECK(s.live_bytes == 0);
  CHECK(s.cached_bytes == 0);
  CHECK(s.peak_live_bytes == 0);
  CHECK(s.hits + s.misses == 0);
}

TEST_CASE("host blocks are 64-byte aligned, small or large, fresh or reused", "[kernels]") {
  HostBlockCache cache;
  std::vector<void*> blocks;
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{3}, std::size_t{100}, mib - 1, mib, 5 * mib + 3})
    blocks.push_back(cache.allocate(bytes));
  for (void* block : blocks) CHECK(address(block) % 64 == 0);
  for (void* block : blocks) cache.release(block);
  void* reused = cache.allocate(5 * mib + 60);  // the class of 5 MiB + 3
  CHECK(address(reused) % 64 == 0);
  CHECK(cache.stats().hits == 1);
  cache.release(reused);
}

TEST_CASE("cpu::allocate recycles large host blocks and release_cached_host_memory frees them", "[kernels]") {
  release_cached_host_memory();
  const HostBlockStats before = host_block_stats();
  void* small = allocate(1000);
  CHECK(address(small) % 64 == 0);
  release(small);
  void* big = allocate(5 * mib + 3);
  CHECK(address(big) % 64 == 0);
  release(big);
  void* again = allocate(5 * mib + 1000);  // the class of 5 MiB + 3
  CHECK(again == big);
  release(again);
  const HostBlockStats after = host_block_stats();
  CHECK(after.misses == before.misses + 1);
  CHECK(after.hits == before.hits + 1);
  CHECK(after.cached_bytes == 5 * mib + kib64);
  release_cached_host_memory();
  CHECK(host_block_stats().cached_bytes == 0);
  CHECK(allocate(0) == nullptr);
}
