// Tests of graph/base/parallel.*: coverage of the loops and their chunks, exceptions carried out
// of parallel regions, the parallel prefix sum and parallel_find_first against serial loops.
#include "graph/base/parallel.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "tests/support/thread_count.hpp"

using namespace halo;
using halo::test::ThreadCount;

namespace {

std::vector<std::int64_t> random_values(std::uint64_t seed, std::int64_t n) {
  RandomStream rng(seed, 1);
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<std::int64_t>(rng.below(1000000));
  return v;
}

}  // namespace

TEST_CASE("parallel_for visits every index of the range exactly once", "[graph]") {
  const ThreadCount scope(GENERATE(1, 3));
  std::vector<int> seen(100003, 0);
  parallel_for(
      3, 100003, [&](std::int64_t i) { ++seen[static_cast<std::size_t>(i)]; }, 97);
  for (std::size_t i = 0; i < seen.size(); ++i) REQUIRE(seen[i] == (i < 3 ? 0 : 1));
  bool called = false;
  parallel_for_ranges(5, 5, [&](std::int64_t, std::int64_t) { called = true; });
  CHECK_FALSE(called);
}

TEST_CASE("parallel_for_ranges hands out chunks of at most grain indices, on one thread as on several", "[graph]") {
  // Callers bound their memory by the chunk (a file map's pages released behind each), so one
  // thread must not get the whole range in one call.
  const ThreadCount scope(GENERATE(1, 3));
  const std::int64_t begin = 7, end = 7 + 10 * 64 + 5, grain = 64;
  std::mutex mutex;
  std::vector<std::pair<std::int64_t, std::int64_t>> chunks;
  parallel_for_ranges(
      begin, end,
      [&](std::int64_t b, std::int64_t e) {
        const std::lock_guard<std::mutex> lock(mutex);
        chunks.emplace_back(b, e);
      },
      grain);
  std::sort(chunks.begin(), chunks.end());
  REQUIRE(chunks.size() == 11);
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    CHECK(chunks[c].first == begin + static_cast<std::int64_t>(c) * grain);
    CHECK(chunks[c].second == std::min(end, chunks[c].first + grain));
  }
}

TEST_CASE("parallel_for carries an exception out of the parallel region", "[graph]") {
  const ThreadCount scope(GENERATE(1, 3));
  CHECK_THROWS_WITH(parallel_for(0, 1000000,
                                 [](std::int64_t i) {
                                   if (i == 777777) throw InvalidArgument("bad index " + std::to_string(i));
                                 }),
                    "bad index 777777");
  CHECK_THROWS_AS(parallel_for(
                      0, 10, [](std::int64_t) { throw std::runtime_error("every index fails"); }, 1),
                  std::runtime_error);
}

TEST_CASE("parallel_for_each_thread gives each thread one contiguous share and carries exceptions", "[graph]") {
  const ThreadCount scope(3);
  std::vector<std::int64_t> begins(3, -1), ends(3, -1);
  int team = 0;
  parallel_for_each_thread(10, 110, [&](int t, int threads, std::int64_t b, std::int64_t e) {
    begins[static_cast<std::size_t>(t)] = b;
    ends[static_cast<std::size_t>(t)] = e;
    if (t == 0) team = threads;
  });
  REQUIRE(team >= 1);
  CHECK(begins[0] == 10);
  for (int t = 1; t < team; ++t) CHECK(begins[static_cast<std::size_t>(t)] == ends[static_cast<std::size_t>(t) - 1]);
  CHECK(ends[static_cast<std::size_t>(team) - 1] == 110);
  CHECK_THROWS_WITH(parallel_for_each_thread(0, 100,
                                             [](int t, int, std::int64_t, std::int64_t) {
                                               if (t == 0) throw InvalidArgument("thread 0 failed");
                                             }),
                    "thread 0 failed");
}

TEST_CASE("exclusive_scan_in_place matches a serial prefix sum on large random input", "[graph]") {
  const ThreadCount scope(GENERATE(1, 2, 3));
  const std::int64_t n = GENERATE(std::int64_t{0}, std::int64_t{1}, std::int64_t{1000}, std::int64_t{(1 << 18) + 7});
  std::vector<std::int64_t> data = random_values(static_cast<std::uint64_t>(n) + 5, n);
  std::vector<std::int64_t> expected(data.size());
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    expected[i] = sum;
    sum += data[i];
  }
  const std::int64_t total = exclusive_scan_in_place(data.data(), n);
  CHECK(total == sum);
  CHECK(data == expected);
}

TEST_CASE("parallel_find_first returns the smallest matching index whatever the thread count", "[graph]") {
  const ThreadCount scope(GENERATE(1, 2, 3));
  const std::int64_t n = 500000;
  const std::vector<std::int64_t> values = random_values(77, n);
  // Rare matches (about one in 20000) spread over every thread's chunks.
  auto pred = [&](std::int64_t i) { return values[static_cast<std::size_t>(i)] % 20000 == 3; };
  std::int64_t expected = n;
  for (std::int64_t i = 0; i < n; ++i)
    if (pred(i)) {
      expected = i;
      break;
    }
  REQUIRE(expected < n);
  CHECK(parallel_find_first(0, n, pred, 1000) == expected);
  CHECK(parallel_find_first(expected + 1, n, pred, 1000) > expected);
  CHECK(parallel_find_first(0, n, [](std::int64_t) { return false; }) == n);
  CHECK(parallel_find_first(10, 10, [](std::int64_t) { return true; }) == 10);
  CHECK(parallel_find_first(
            0, n, [](std::int64_t i) { return i >= 123456; }, 7) == 123456);
}
