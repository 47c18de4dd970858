// Choosing, loading and reading the resident feature rows.
#include "train/features/feature_cache.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::train {
namespace {

// Rows read between two page releases while a cache is built from a mapped source: large enough
// that the madvise calls cost nothing, small enough that the resident set stays small.
constexpr std::int64_t release_block_bytes = 4 << 20;

}  // namespace

FeatureCache FeatureCache::build(const FeatureSource& source, const std::vector<double>& scores,
                                 std::int64_t budget_bytes, kernels::Device device) {
  const std::int64_t n = source.rows();
  HALO_EXPECTS(static_cast<std::int64_t>(scores.size()) == n,
               "scores has " + std::to_string(scores.size()) + " values for " + std::to_string(n) + " rows");
  HALO_EXPECTS(budget_bytes >= 0, "the budget must be non-negative, got " + std::to_string(budget_bytes));
  FeatureCache cache;
  const std::int64_t row_bytes = source.row_bytes();
  const std::int64_t count = row_bytes == 0 ? 0 : std::min(n, budget_bytes / row_bytes);
  if (count == 0) return cache;

  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  const auto hotter = [&](std::int64_t a, std::int64_t b) {
    const double sa = scores[static_cast<std::size_t>(a)];
    const double sb = scores[static_cast<std::size_t>(b)];
    return sa != sb ? sa > sb : a < b;
  };
  if (count < n) std::nth_element(order.begin(), order.begin() + count, order.end(), hotter);
  order.resize(static_cast<std::size_t>(count));
  std::sort(order.begin(), order.end());
  cache.rows_ = std::move(order);

  cache.values_ = kernels::Tensor::empty(count, source.cols());
  const kernels::TensorView out = cache.values_.view();
  // Consecutive cached rows are read with one call, so a dense cache reads like a stream.
  const auto id = [&](std::int64_t k) { return cache.rows_[static_cast<std::size_t>(k)]; };
  // A mapped source's pages are given back as the reads go, in consecutive ranges so that each
  // page is released once: cached rows scattered over a file larger than the memory would
  // otherwise map most of its pages before the first release.
  const std::int64_t release_rows = std::max<std::int64_t>(1, release_block_bytes / row_bytes);
  std::int64_t released = 0;
  for (std::int64_t k = 0; k < count;) {
    std::int64_t run = 1;
    while (k + run < count && id(k + run) == id(k) + run) ++run;
    const std::int64_t first = id(k);
    source.read_rows(first, first + run, out.slice_rows(k, k + run));
    k += run;
    if (first + run - released >= release_rows) {
      source.release(released, first + run);
      released = first + run;
    }
  }
  source.release(released, n);
  if (device.is_cuda()) cache.values_ = cache.values_.to(device);
  return cache;
}

std::int64_t FeatureCache::assemble(const FeatureSource& source, std::int64_t begin, std::int64_t end,
                                    kernels::TensorView out) const {
  HALO_EXPECTS(out.rows == end - begin && out.cols == source.cols(),
               "out must be " + std::to_string(end - begin) + " x " + std::to_string(source.cols()) + ", got " +
                   std::to_string(out.rows) + " x " + std::to_string(out.cols));
  HALO_EXPECTS(!values_.device().is_cuda(),
               "FeatureCache::assemble copies into host memory, but the cache is on " + values_.device().to_string() +
                   "; a GPU chunk is assembled from runs()");
  HALO_EXPECTS(rows_.empty() || values_.cols() == source.cols(),
               "the cache holds rows of " + std::to_string(values_.cols()) + " columns, the source has " +
                   std::to_string(source.cols()));
  auto next = std::lower_bound(rows_.begin(), rows_.end(), begin);
  std::int64_t hits = 0;
  std::int64_t r = begin;
  const std::size_t row_bytes = static_cast<std::size_t>(source.cols()) * sizeof(float);
  while (r < end) {
    if (next != rows_.end() && *next == r) {
      std::memcpy(out.row(r - begin), values_.data() + (next - rows_.begin()) * values_.cols(), row_bytes);
      ++next;
      ++hits;
      ++r;
      continue;
    }
    const std::int64_t stop = next != rows_.end() ? std::min(end, *next) : end;
    source.read_rows(r, stop, out.slice_rows(r - begin, stop - begin));
    r = stop;
  }
  return hits;
}

std::vector<CacheRun> FeatureCache::runs(std::int64_t begin, std::int64_t end) const {
  HALO_EXPECTS(0 <= begin && begin <= end, "FeatureCache::runs: rows [" + std::to_string(begin) + ", " +
                                               std::to_string(end) + ") are not a range");
  std::vector<CacheRun> out;
  const auto first = std::lower_bound(rows_.begin(), rows_.end(), begin);
  std::int64_t k = first - rows_.begin();
  const std::int64_t size = static_cast<std::int64_t>(rows_.size());
  const auto id = [&](std::int64_t i) { return rows_[static_cast<std::size_t>(i)]; };
  std::int64_t r = begin;
  while (r < end) {
    if (k < size && id(k) == r) {
      // Consecutive row ids are consecutive in the cache too (its rows are ascending and distinct).
      CacheRun run{r, r + 1, k};
      while (run.end < end && k + run.rows() < size && id(k + run.rows()) == run.end) ++run.end;
      k += run.rows();
      r = run.end;
      out.push_back(run);
      continue;
    }
    const std::int64_t stop = k < size ? std::min(end, id(k)) : end;
    out.push_back({r, stop, -1});
    r = stop;
  }
  return out;
}

std::vector<double> degree_scores(const graph::CsrGraph& a) {
  std::vector<double> scores(static_cast<std::size_t>(a.num_rows()));
  const std::int64_t* indptr = a.indptr().data();
  parallel_for(0, a.num_rows(), [&](std::int64_t i) {
    scores[static_cast<std::size_t>(i)] = static_cast<double>(indptr[i + 1] - indptr[i]);
  });
  return scores;
}

}  // namespace halo::train
