// Tests of train/features/feature_cache.*: which rows a budget keeps, that assembled chunks equal the
// source's rows whatever is cached, the runs a GPU chunk is copied by, and the degree scores.
#include "train/features/feature_cache.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "graph/build.hpp"

using namespace halo;
using namespace halo::train;
using kernels::TensorView;

namespace {

// Rows of random non-zero values (each in [0.5, 1.5) with a random sign).
Array<float> random_features(std::uint64_t seed, std::int64_t rows, std::int64_t cols) {
  RandomStream rng(seed, 17);
  Array<float> a = Array<float>::matrix(rows, cols);
  for (float& v : a) v = static_cast<float>((0.5 + rng.uniform()) * (rng.below(2) == 0 ? -1.0 : 1.0));
  return a;
}

std::vector<float> read_all(const FeatureSource& s, std::int64_t begin, std::int64_t end) {
  std::vector<float> out(static_cast<std::size_t>((end - begin) * s.cols()));
  s.read_rows(begin, end, TensorView{out.data(), end - begin, s.cols(), s.cols(), kernels::Device::cpu()});
  return out;
}

}  // namespace

TEST_CASE("FeatureCache::build keeps the highest-scoring rows the budget holds, ties to the lower id", "[train]") {
  const FeatureSource s = FeatureSource::from_array(random_features(1, 8, 4));
  const std::vector<double> scores{3, 9, 1, 9, 5, 0, 5, 2};
  // 3 rows of 16 bytes fit in 60 bytes: rows 1 and 3 (score 9), then row 4 (the lower id of the two 5s).
  const FeatureCache cache = FeatureCache::build(s, scores, 60);
  CHECK(cache.rows() == std::vector<std::int64_t>{1, 3, 4});
  CHECK(cache.size() == 3);
  CHECK(cache.cols() == 4);
  CHECK(cache.bytes() == 48);
  const std::vector<float> all = read_all(s, 0, 8);
  const kernels::ConstTensorView v = cache.values();
  for (std::int64_t k = 0; k < 3; ++k)
    for (std::int64_t c = 0; c < 4; ++c)
      CHECK(v.row(k)[c] == all[static_cast<std::size_t>(cache.rows()[static_cast<std::size_t>(k)] * 4 + c)]);
}

TEST_CASE("FeatureCache::build caches nothing on a budget below one row and everything on a large one", "[train]") {
  const FeatureSource s = FeatureSource::from_array(random_features(2, 6, 5));
  const std::vector<double> scores(6, 1.0);
  CHECK(FeatureCache::build(s, scores, 19).size() == 0);
  CHECK(FeatureCache::build(s, scores, 0).bytes() == 0);
  CHECK(FeatureCache::build(s, scores, 1 << 20).rows() == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5});
  CHECK_THROWS_WITH(FeatureCache::build(s, std::vector<double>(5, 1.0), 100), Catch::Contains("5 values for 6 rows"));
  CHECK_THROWS_AS(FeatureCache::build(s, scores, -1), InvalidArgument);
}

TEST_CASE("FeatureCache::assemble copies the source's rows, the cached ones from the cache", "[train]") {
  const std::int64_t n = 101, cols = 6;
  const FeatureSource s = FeatureSource::from_array(random_features(3, n, cols));
  RandomStream rng(3, 99);
  std::vector<double> scores(static_cast<std::size_t>(n));
  for (double& x : scores) x = rng.uniform();
  const FeatureCache cache = FeatureCache::build(s, scores, 40 * s.row_bytes());
  REQUIRE(cache.size() == 40);
  const FeatureCache empty;
  const std::vector<std::pair<std::int64_t, std::int64_t>> ranges{{0, n}, {13, 57}, {100, 101}, {7, 7}};
  for (const auto& [begin, end] : ranges) {
    CAPTURE(begin, end);
    std::vector<float> out(static_cast<std::size_t>((end - begin) * cols), -1.0f);
    const TensorView view{out.data(), end - begin, cols, cols, kernels::Device::cpu()};
    std::int64_t cached_in_range = 0;
    for (std::int64_t r : cache.rows()) cached_in_range += r >= begin && r < end ? 1 : 0;
    CHECK(cache.assemble(s, begin, end, view) == cached_in_range);
    CHECK(out == read_all(s, begin, end));
    std::fill(out.begin(), out.end(), -1.0f);
    CHECK(empty.assemble(s, begin, end, view) == 0);
    CHECK(out == read_all(s, begin, end));
  }
}

TEST_CASE("FeatureCache::assemble reads each run of uncached rows with one source read", "[train]") {
  // Rows 2 and 5 of 8 are cached, so [0, 8) is read as the runs [0, 2), [3, 5) and [6, 8).
  std::vector<std::pair<std::int64_t, std::int64_t>> reads;
  const FeatureSource s = FeatureSource::from_reader(8, 1, [&](const FeatureBlock& b, TensorView out) {
    reads.emplace_back(b.row_begin, b.row_end);
    for (std::int64_t r = 0; r < b.rows(); ++r) out.row(r)[0] = static_cast<float>(b.row_begin + r + 1);
  });
  const FeatureCache cache = FeatureCache::build(s, {0, 0, 5, 0, 0, 4, 0, 0}, 8);
  CHECK(cache.rows() == std::vector<std::int64_t>{2, 5});
  reads.clear();
  std::vector<float> out(8);
  CHECK(cache.assemble(s, 0, 8, TensorView{out.data(), 8, 1, 1, kernels::Device::cpu()}) == 2);
  CHECK(reads == std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 2}, {3, 5}, {6, 8}});
  CHECK(out == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("FeatureCache::runs splits a chunk into alternating source and cache runs covering it exactly", "[train]") {
  //   row:    0 1 2 3 4 5 6 7 8 9
  //   cached:   x x   x       x x    (cache positions 0..4 hold rows 1 2 4 8 9)
  const FeatureSource s = FeatureSource::from_array(random_features(4, 10, 3));
  const std::vector<double> scores{0, 1, 1, 0, 1, 0, 0, 0, 1, 1};
  const FeatureCache cache = FeatureCache::build(s, scores, 5 * 12);
  REQUIRE(cache.rows() == std::vector<std::int64_t>{1, 2, 4, 8, 9});
  const auto as_tuples = [](const std::vector<CacheRun>& runs) {
    std::vector<std::vector<std::int64_t>> out;
    for (const CacheRun& r : runs) out.push_back({r.begin, r.end, r.cache_index});
    return out;
  };
  using Runs = std::vector<std::vector<std::int64_t>>;
  CHECK(as_tuples(cache.runs(0, 10)) ==
        Runs{{0, 1, -1}, {1, 3, 0}, {3, 4, -1}, {4, 5, 2}, {5, 8, -1}, {8, 10, 3}});
  // A chunk boundary inside a cached run and inside a source run.
  CHECK(as_tuples(cache.runs(2, 7)) == Runs{{2, 3, 1}, {3, 4, -1}, {4, 5, 2}, {5, 7, -1}});
  CHECK(as_tuples(cache.runs(9, 10)) == Runs{{9, 10, 4}});
  CHECK(as_tuples(cache.runs(6, 8)) == Runs{{6, 8, -1}});
  CHECK(cache.runs(5, 5).empty());
  CHECK(as_tuples(FeatureCache().runs(0, 4)) == Runs{{0, 4, -1}});
  CHECK_THROWS_AS(cache.runs(5, 4), InvalidArgument);

  // Against a row-by-row reference: every row of every chunk is covered once, from the right place.
  for (std::int64_t chunk = 1; chunk <= 10; ++chunk)
    for (std::int64_t begin = 0; begin < 10; begin += chunk) {
      const std::int64_t end = std::min<std::int64_t>(10, begin + chunk);
      std::int64_t next = begin;
      for (const CacheRun& r : cache.runs(begin, end)) {
        CHECK(r.begin == next);
        CHECK(r.end > r.begin);
        for (std::int64_t row = r.begin; row < r.end; ++row) {
          const auto at = std::find(cache.rows().begin(), cache.rows().end(), row);
          const std::int64_t position = at == cache.rows().end() ? -1 : at - cache.rows().begin();
          CHECK((r.cached() ? r.cache_index + row - r.begin : -1) == position);
        }
        next = r.end;
      }
      CHECK(next == end);
    }
}

TEST_CASE("degree_scores counts the entries of each row", "[train]") {
  // 0 -> {1, 2, 3}, 1 -> {0}, 2 -> {}, 3 -> {0, 2}
  const std::vector<std::int64_t> rows{0, 0, 0, 1, 3, 3};
  const std::vector<std::int64_t> cols{1, 2, 3, 0, 0, 2};
  const graph::CsrGraph g =
      graph::csr_from_coo<std::int64_t>(4, 4, rows.data(), cols.data(), nullptr, 6, graph::CooToCsrOptions{});
  CHECK(degree_scores(g) == std::vector<double>{3, 1, 0, 2});
}
