// Setting up the first layer's input: the resident copy, or the streams (source, cache, pipeline)
// and the precomputed first aggregation.
#include "train/features/feature_input.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "graph/base/error.hpp"
#include "kernels/elementwise.hpp"

namespace halo::train {

using kernels::Tensor;
using kernels::TensorView;

namespace {

// Rows scanned between two page releases by has_negative_values on a mapped source.
constexpr std::int64_t scan_block_bytes = 4 << 20;

}  // namespace

FeatureInput::FeatureInput(FeatureSource features, const FeatureInputOptions& options, Aggregation* aggregation,
                           const std::vector<double>& scores)
    : options_(options) {
  x_stream_.source = std::move(features);
  HALO_EXPECTS(scores.empty() || static_cast<std::int64_t>(scores.size()) == x_stream_.source.rows(),
               "FeatureInput: " + std::to_string(scores.size()) + " scores for " + std::to_string(x_stream_.source.rows()) +
                   " rows");
  HALO_EXPECTS(!options.precompute_aggregation || aggregation != nullptr,
               "FeatureInput: precomputing the first aggregation needs its operator");
  if (options.streamed)
    set_up_streamed(aggregation, scores);
  else
    set_up_resident(aggregation);
}

void FeatureInput::set_up_resident(Aggregation* aggregation) {
  x_ = Tensor::empty(x_stream_.source.rows(), x_stream_.source.cols(), options_.device);
  x_stream_.source.copy_to(x_.view());
  if (options_.normalize_rows) kernels::normalize_rows(x_.view());
  if (options_.precompute_aggregation) {
    aggregated_ = aggregation->forward(x_);
    if (!options_.keep_features) x_ = Tensor();
  }
  input_ = LayerInput(x_.empty() ? InputMatrix() : InputMatrix(x_),
                      aggregated_.empty() ? InputMatrix() : InputMatrix(aggregated_));
}

void FeatureInput::open_stream(Stream& s, std::int64_t budget_bytes, const std::vector<double>& scores) {
  const FeatureBudgetSplit split =
      split_feature_budget(budget_bytes, s.source.rows(), s.source.cols(), options_.staging_buffers,
                           FeaturePipeline::staging_row_bytes(s.source, options_.device) - s.source.row_bytes());
  s.cache = FeatureCache::build(s.source, scores.empty() ? std::vector<double>(s.source.rows(), 0.0) : scores,
                                split.cache_bytes, options_.device);
  FeaturePipelineOptions o;
  o.budget_bytes = budget_bytes;
  o.staging_buffers = options_.staging_buffers;
  o.chunk_rows = split.chunk_rows;
  o.device = options_.device;
  s.pipeline.emplace(s.source, o, &s.cache);
}

void FeatureInput::set_up_streamed(Aggregation* aggregation, const std::vector<double>& scores) {
  if (!options_.precompute_aggregation) {
    open_stream(x_stream_, options_.budget_bytes, scores);
    RowTransform normalize;
    if (options_.normalize_rows) normalize = [](TensorView rows, std::int64_t) { kernels::normalize_rows(rows); };
    input_ = LayerInput(InputMatrix(*x_stream_.pipeline, std::move(normalize)), InputMatrix());
    return;
  }
  if (options_.normalize_rows)
    throw UnsupportedError("FeatureInput: precomputing the first aggregation of streamed features cannot normalise "
                           "their rows (the row sums would take a pass of their own); train without "
                           "normalize_features or with the features in memory");
  const auto* local = dynamic_cast<const LocalAggregation*>(aggregation);
  if (local == nullptr)
    throw UnsupportedError("FeatureInput: precomputing the first aggregation of streamed features needs the operator "
                           "as one CSR in this process; a rank of a partitioned run aggregates through halo "
                           "exchanges. Train without precompute_first_aggregation, or with the features in memory");
  {
    // Â·X is computed once, on the host's cores with the host CSR, by column panels through the
    // budget (in host memory: the features do not fit where the epochs run); every panel of the
    // budget goes to it, the caches come after it. On a GPU the epochs then stream Â·X there
    // exactly as they would stream X.
    FeaturePipelineOptions o;
    o.budget_bytes = options_.budget_bytes;
    o.staging_buffers = options_.staging_buffers;
    FeaturePipeline panels(x_stream_.source, o);
    aggregated_stream_.source = FeatureSource::from_array(panels.aggregate(local->matrix()));
    precompute_stats_ = panels.total();
  }
  // GraphSAGE's root term still multiplies X: X and Â·X then share the budget equally.
  const std::int64_t share = options_.keep_features ? options_.budget_bytes / 2 : options_.budget_bytes;
  open_stream(aggregated_stream_, share, scores);
  if (options_.keep_features) open_stream(x_stream_, share, scores);
  input_ = LayerInput(options_.keep_features ? InputMatrix(*x_stream_.pipeline, {}) : InputMatrix(),
                      InputMatrix(*aggregated_stream_.pipeline, {}));
}

FeaturePassStats FeatureInput::stats() const {
  FeaturePassStats total = precompute_stats_;
  for (const Stream* s : {&x_stream_, &aggregated_stream_})
    if (s->pipeline) total += s->pipeline->total();
  return total;
}

std::int64_t FeatureInput::chunk_rows() const {
  for (const Stream* s : {&aggregated_stream_, &x_stream_})
    if (s->pipeline) return s->pipeline->chunk_rows();
  return 0;
}

std::int64_t FeatureInput::cache_rows() const { return x_stream_.cache.size() + aggregated_stream_.cache.size(); }

std::int64_t FeatureInput::cache_bytes() const { return x_stream_.cache.bytes() + aggregated_stream_.cache.bytes(); }

std::int64_t FeatureInput::staging_bytes() const {
  std::int64_t bytes = 0;
  for (const Stream* s : {&x_stream_, &aggregated_stream_})
    if (s->pipeline) bytes += s->pipeline->staging_bytes();
  return bytes;
}

bool FeatureInput::has_negative_values() const {
  const FeatureSource& source = x_stream_.source;
  if (const float* values = source.rows() > 0 ? source.host_row(0) : nullptr)
    return std::any_of(values, values + source.rows() * source.cols(), [](float v) { return v < 0.0f; });
  const std::int64_t block =
      std::max<std::int64_t>(1, scan_block_bytes / std::max<std::int64_t>(source.row_bytes(), 1));
  Tensor buffer = Tensor::empty(std::min(block, source.rows()), source.cols());
  for (std::int64_t begin = 0; begin < source.rows(); begin += block) {
    const std::int64_t end = std::min(source.rows(), begin + block);
    const TensorView rows = buffer.view().slice_rows(0, end - begin);
    source.read_rows(begin, end, rows);
    source.release(begin, end);
    const float* values = rows.data;
    if (std::any_of(values, values + rows.rows * rows.cols, [](float v) { return v < 0.0f; })) return true;
  }
  return false;
}

}  // namespace halo::train
