// FeatureCache: the feature rows kept resident on the "device" for good, chosen by a score per row
// (highest degree, or a measured reuse count) within a byte budget, so that the feature pipeline
// copies only the other rows across the bus on every pass.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/csr.hpp"
#include "kernels/tensor.hpp"
#include "train/features/feature_source.hpp"

namespace halo::train {

// A run of consecutive rows of a chunk that come from one place: the cache (cache_index is the
// position of row `begin` in FeatureCache::values(), the run's rows following it there) or the
// source (cache_index -1).
struct CacheRun {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t cache_index = -1;

  bool cached() const { return cache_index >= 0; }
  std::int64_t rows() const { return end - begin; }
};

class FeatureCache {
 public:
  // The empty cache: every row comes from the source.
  FeatureCache() = default;

  // Keeps the min(rows, budget_bytes / row_bytes) rows of highest score resident (ties go to the
  // lower row id, so the choice is deterministic), read once from `source` in increasing row
  // order by the calling thread; a mapped source's pages are released as the reads go (at most a
  // few MiB of them mapped at once). `scores` has one value per row of the source. The cache is
  // a tensor on `device`: host memory for the CPU backend (its "device"), GPU memory otherwise
  // (read into host memory first, then copied over once).
  // Cost: O(rows log rows) to choose, plus reading the chosen rows.
  static FeatureCache build(const FeatureSource& source, const std::vector<double>& scores,
                            std::int64_t budget_bytes, kernels::Device device = kernels::Device::cpu());

  // Rows held, their width, and the bytes they take.
  std::int64_t size() const { return static_cast<std::int64_t>(rows_.size()); }
  std::int64_t cols() const { return values_.cols(); }
  std::int64_t bytes() const { return static_cast<std::int64_t>(values_.bytes()); }
  // The cached row ids, ascending; row rows()[k] is row k of values().
  const std::vector<std::int64_t>& rows() const { return rows_; }
  kernels::ConstTensorView values() const { return values_.view(); }

  // Copies rows [begin, end) of the features into `out` (end - begin rows x the source's width,
  // host): cached rows from the cache, each run of other rows with one source.read_rows. Returns
  // the number of rows taken from the cache. A cache built for another source of the same width
  // would copy that source's rows: the caller pairs them. O(end - begin) plus the copies.
  std::int64_t assemble(const FeatureSource& source, std::int64_t begin, std::int64_t end,
                        kernels::TensorView out) const;

  // Rows [begin, end) as maximal runs alternating between the source and the cache, in row
  // order, covering the range exactly (empty when begin == end): what a GPU chunk is assembled
  // from, one copy per run. O(end - begin + log size()).
  std::vector<CacheRun> runs(std::int64_t begin, std::int64_t end) const;

 private:
  std::vector<std::int64_t> rows_;
  kernels::Tensor values_;
};

// A score per row of `a` for FeatureCache::build: its number of entries (row degree). For the
// symmetric graphs GCN and GraphSAGE train on, that is also how many rows aggregate from it.
// Parallel, O(rows).
std::vector<double> degree_scores(const graph::CsrGraph& a);

}  // namespace halo::train
