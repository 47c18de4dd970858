// The streaming passes of the feature pipeline: the budget checks, the worker's fills (cache plus
// source, with read-ahead and release of a mapped file; on a GPU, the chunk's copies to the
// device) and the compute side (transform, GEMM or SpMM) on the calling thread.
#include "train/features/feature_pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/gemm.hpp"
#include "kernels/spmm.hpp"
#include "train/features/detail/feature_staging.hpp"

namespace halo::train {

using kernels::ConstTensorView;
using kernels::Tensor;
using kernels::TensorView;

namespace {

constexpr std::int64_t float_bytes = static_cast<std::int64_t>(sizeof(float));
// Rows an aggregate() panel read covers between two page releases of a mapped source: large
// enough that the madvise calls cost nothing, small enough that the resident set stays small.
constexpr std::int64_t aggregate_block_bytes = 4 << 20;
// Bytes of source rows a GPU fill reads into its pinned buffer before queuing their copy: the
// copy of one block overlaps the read of the next, and each copy is large enough to run at the
// bus's rate.
constexpr std::int64_t upload_block_bytes = 4 << 20;

std::string bytes_text(std::int64_t bytes) { return std::to_string(bytes) + " bytes"; }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

void check_staging_count(int staging_buffers) {
  if (staging_buffers != 2 && staging_buffers != 3)
    throw InvalidArgument("feature pipeline: staging_buffers must be 2 or 3, got " + std::to_string(staging_buffers));
}

void check_device(const char* op, const char* name, const ConstTensorView& v, const kernels::Device& device) {
  if (v.device != device)
    throw InvalidArgument(std::string("FeaturePipeline::") + op + ": " + name + " is on " + v.device.to_string() +
                          ", the pipeline streams to " + device.to_string());
}

}  // namespace

FeatureBudgetSplit split_feature_budget(std::int64_t budget_bytes, std::int64_t rows, std::int64_t cols,
                                        int staging_buffers, std::int64_t extra_staging_row_bytes) {
  check_staging_count(staging_buffers);
  HALO_EXPECTS(rows >= 0 && cols >= 0,
               "extents must be non-negative, got " + std::to_string(rows) + " x " + std::to_string(cols));
  const std::int64_t row_bytes = cols * float_bytes;
  const std::int64_t staging_row = row_bytes + extra_staging_row_bytes;
  const std::int64_t minimum = staging_buffers * staging_row;
  HALO_EXPECTS(budget_bytes >= minimum, "a budget of " + bytes_text(budget_bytes) + " cannot hold " +
                                            std::to_string(staging_buffers) + " staging buffers of one row of " +
                                            std::to_string(cols) + " floats: the minimum is " + bytes_text(minimum));
  const std::int64_t max_rows = std::max<std::int64_t>(rows, 1);
  if (row_bytes == 0) return {max_rows, 0};
  const std::int64_t chunk = std::clamp<std::int64_t>(budget_bytes / 4 / minimum, 1, max_rows);
  return {chunk, std::min(budget_bytes - staging_buffers * chunk * staging_row, rows * row_bytes)};
}

double FeaturePassStats::hit_rate() const {
  const std::int64_t reads = cache_hits + cache_misses;
  return reads == 0 ? 0.0 : static_cast<double>(cache_hits) / static_cast<double>(reads);
}

FeaturePassStats& FeaturePassStats::operator+=(const FeaturePassStats& other) {
  passes += other.passes;
  chunks += other.chunks;
  bytes_to_device += other.bytes_to_device;
  bytes_from_source += other.bytes_from_source;
  cache_hits += other.cache_hits;
  cache_misses += other.cache_misses;
  wait_seconds += other.wait_seconds;
  compute_seconds += other.compute_seconds;
  fill_seconds += other.fill_seconds;
  return *this;
}

RowTransform dropout_rows(float p, kernels::DropoutKey key, kernels::IndexView global_ids) {
  HALO_EXPECTS(p >= 0.0f && p < 1.0f, "p must be in [0, 1), got " + std::to_string(p));
  if (p == 0.0f) return {};
  return [p, key, global_ids](TensorView rows, std::int64_t first_row) {
    if (global_ids.data != nullptr) {
      if (first_row < 0 || first_row + rows.rows > global_ids.size)
        throw InvalidArgument("dropout_rows: rows [" + std::to_string(first_row) + ", " +
                              std::to_string(first_row + rows.rows) + ") are not within the " +
                              std::to_string(global_ids.size) + " global ids");
      kernels::dropout_forward(rows, rows, p, key, {global_ids.data + first_row, rows.rows});
      return;
    }
    // The rows' own numbers as ids: dropout_forward would otherwise key row r of the chunk on r.
    std::vector<std::int64_t> ids(static_cast<std::size_t>(rows.rows));
    std::iota(ids.begin(), ids.end(), first_row);
    kernels::dropout_forward(rows, rows, p, key, {ids.data(), rows.rows});
  };
}

FeaturePipeline::FeaturePipeline(const FeatureSource& source, const FeaturePipelineOptions& options,
                                 const FeatureCache* cache)
    : source_(source), cache_(cache), options_(options) {
  check_staging_count(options.staging_buffers);
  HALO_EXPECTS(options.chunk_rows >= 0, "chunk_rows must be non-negative, got " + std::to_string(options.chunk_rows));
  HALO_EXPECTS(options.budget_bytes >= 0, "the budget must be non-negative, got " + bytes_text(options.budget_bytes));
  const std::int64_t n = source.rows();
  const std::int64_t cache_bytes = cache != nullptr ? cache->bytes() : 0;
  if (cache != nullptr && cache->size() > 0)
    HALO_EXPECTS(cache->cols() == source.cols() && cache->rows().back() < n,
                 "the cache holds rows up to " + std::to_string(cache->rows().back()) + " of " +
                     std::to_string(cache->cols()) + " columns; the source has " + std::to_string(n) + " rows of " +
                     std::to_string(source.cols()));
  if (cache != nullptr && cache->size() > 0)
    HALO_EXPECTS(cache->values().device == options.device, "the cache is on " + cache->values().device.to_string() +
                                                               ", the pipeline streams to " +
                                                               options.device.to_string());
  const std::int64_t max_rows = std::max<std::int64_t>(n, 1);
  const std::int64_t row_bytes = staging_row_bytes(source, options.device);
  const std::int64_t wanted = std::min(std::max<std::int64_t>(options.chunk_rows, 1), max_rows);
  const std::int64_t minimum = cache_bytes + options.staging_buffers * wanted * row_bytes;
  HALO_EXPECTS(options.budget_bytes >= minimum,
               "a budget of " + bytes_text(options.budget_bytes) + " cannot hold " +
                   std::to_string(options.staging_buffers) + " staging buffers of " + std::to_string(wanted) +
                   (wanted == 1 ? " row" : " rows") + " of " + std::to_string(source.cols()) +
                   " floats plus a cache of " + bytes_text(cache_bytes) + ": the minimum is " + bytes_text(minimum));
  if (options.chunk_rows > 0)
    chunk_rows_ = wanted;
  else if (row_bytes == 0)
    chunk_rows_ = max_rows;
  else
    chunk_rows_ = std::min(max_rows, (options.budget_bytes - cache_bytes) / (options.staging_buffers * row_bytes));
}

std::int64_t FeaturePipeline::num_chunks() const { return ceil_div(source_.rows(), chunk_rows_); }

std::int64_t FeaturePipeline::staging_bytes() const {
  return options_.staging_buffers * std::min(chunk_rows_, source_.rows()) * staging_row_bytes(source_, options_.device);
}

std::int64_t FeaturePipeline::staging_row_bytes(const FeatureSource& source, const kernels::Device& device) {
  return staging_row_bytes(source.cols(), source.stored_dtype() == datasets::FeatureDType::float32 ? float_bytes : 2,
                           device);
}

std::int64_t FeaturePipeline::staging_row_bytes(std::int64_t cols, std::int64_t stored_value_bytes,
                                                const kernels::Device& device) {
  const bool widened_on_device = device.is_cuda() && stored_value_bytes != float_bytes;
  return cols * (float_bytes + (widened_on_device ? stored_value_bytes : 0));
}

void FeaturePipeline::record(const FeaturePassStats& pass) {
  last_ = pass;
  total_ += pass;
}

TensorView FeaturePipeline::slot_rows(int slot, std::int64_t rows) {
  if (!options_.device.is_cuda()) return stages_[static_cast<std::size_t>(slot)].view().slice_rows(0, rows);
  return {static_cast<float*>(copies_->device_buffer(slot)), rows, source_.cols(), source_.cols(), options_.device};
}

void FeaturePipeline::allocate_staging() {
  const std::int64_t slot_rows = std::min(chunk_rows_, source_.rows());
  if (options_.device.is_cuda()) {
    if (!copies_) {
      const bool halves = source_.stored_dtype() != datasets::FeatureDType::float32;
      copies_ = std::make_unique<kernels::cuda::StagingCopies>(
          options_.device.index, options_.staging_buffers, static_cast<std::size_t>(slot_rows * source_.row_bytes()),
          halves ? static_cast<std::size_t>(slot_rows * source_.stored_row_bytes()) : 0);
      // Checked once: page-locked memory stays so while the source (kept alive) holds it.
      pinned_source_ = source_.rows() > 0 && !source_.is_mapped() &&
                       kernels::cuda::is_pinned_host(source_.host_row(0));
    }
    return;
  }
  if (stages_.empty())
    for (int s = 0; s < options_.staging_buffers; ++s) stages_.push_back(Tensor::empty(slot_rows, source_.cols()));
}

void FeaturePipeline::stream(const RowTransform& transform, const ChunkConsumer& consume) {
  const std::int64_t n = source_.rows();
  const std::int64_t cols = source_.cols();
  const std::int64_t chunks = num_chunks();
  const bool gpu = options_.device.is_cuda();
  allocate_staging();

  const auto chunk_end = [&](std::int64_t job) { return std::min(n, (job + 1) * chunk_rows_); };
  std::int64_t hits = 0;  // written by the worker only, read after it was joined
  const auto fill_host = [&](std::int64_t begin, std::int64_t end, int slot) {
    const TensorView out = slot_rows(slot, end - begin);
    if (cache_ != nullptr)
      hits += cache_->assemble(source_, begin, end, out);
    else
      source_.read_rows(begin, end, out);
    source_.release(begin, end);
    if (transform) transform(out, begin);
  };
  const std::int64_t row_bytes = source_.row_bytes();
  const std::int64_t block_rows = std::max<std::int64_t>(1, upload_block_bytes / std::max<std::int64_t>(row_bytes, 1));
  const auto fill_device = [&](std::int64_t begin, std::int64_t end, int slot) {
    float* host = static_cast<float*>(copies_->host(slot));
    const auto offset = [&](std::int64_t row) { return static_cast<std::size_t>((row - begin) * row_bytes); };
    const auto from_source = [&](std::int64_t first, std::int64_t last) {
      if (source_.stored_dtype() != datasets::FeatureDType::float32) {
        // 16-bit rows cross the bus as stored (half the bytes) and are widened on the GPU.
        const HalfFormat format =
            source_.stored_dtype() == datasets::FeatureDType::float16 ? HalfFormat::float16 : HalfFormat::bfloat16;
        for (std::int64_t b = first; b < last; b += block_rows) {
          const std::int64_t e = std::min(last, b + block_rows);
          source_.read_stored_rows(b, e, reinterpret_cast<unsigned char*>(host) + offset(b));
          copies_->upload_widened(slot, offset(b), static_cast<std::size_t>((e - b) * cols), format);
        }
        return;
      }
      if (pinned_source_) {
        // Page-locked source rows: the copy engine reads them where they are, one copy per run.
        copies_->upload_from(slot, offset(first), source_.host_row(first),
                             static_cast<std::size_t>((last - first) * row_bytes));
        return;
      }
      for (std::int64_t b = first; b < last; b += block_rows) {
        const std::int64_t e = std::min(last, b + block_rows);
        source_.read_rows(b, e, TensorView{host + (b - begin) * cols, e - b, cols, cols, kernels::Device::cpu()});
        copies_->upload(slot, offset(b), static_cast<std::size_t>((e - b) * row_bytes));
      }
    };
    copies_->begin_fill(slot);
    if (cache_ == nullptr) {
      from_source(begin, end);
    } else {
      for (const CacheRun& run : cache_->runs(begin, end)) {
        if (!run.cached()) {
          from_source(run.begin, run.end);
          continue;
        }
        copies_->copy_from_device(slot, offset(run.begin), cache_->values().data + run.cache_index * cols,
                                  static_cast<std::size_t>(run.rows() * row_bytes));
        hits += run.rows();
      }
    }
    source_.release(begin, end);
    copies_->end_fill(slot);
  };
  const auto fill = [&](std::int64_t job, int slot) {
    const std::int64_t begin = job * chunk_rows_;
    const std::int64_t end = chunk_end(job);
    // The read-ahead of the next chunk runs in the kernel while this one is copied.
    if (job + 1 < chunks) source_.prefetch(end, chunk_end(job + 1));
    if (gpu)
      fill_device(begin, end, slot);
    else
      fill_host(begin, end, slot);
  };

  FeaturePassStats pass;
  pass.passes = 1;
  pass.chunks = chunks;
  if (chunks > 0) source_.prefetch(0, chunk_end(0));
  detail::StagingRing ring(options_.staging_buffers, chunks, fill);
  for (std::int64_t job = 0; job < chunks; ++job) {
    const int slot = ring.acquire(job);
    const auto start = std::chrono::steady_clock::now();
    const std::int64_t begin = job * chunk_rows_;
    const TensorView rows = slot_rows(slot, chunk_end(job) - begin);
    if (gpu) {
      copies_->use(slot);
      if (transform) transform(rows, begin);
    }
    consume(rows, begin);
    if (gpu) copies_->released(slot);
    pass.compute_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ring.release(job);
  }
  ring.finish();
  pass.wait_seconds = ring.wait_seconds();
  pass.fill_seconds = ring.fill_seconds();
  pass.cache_hits = hits;
  pass.cache_misses = n - hits;
  // What crossed into staging: floats on the CPU; on a GPU, the rows as the source stores them.
  pass.bytes_to_device = pass.cache_misses * (gpu ? source_.stored_row_bytes() : source_.row_bytes());
  pass.bytes_from_source = pass.cache_misses * source_.stored_row_bytes();
  record(pass);
}

Tensor FeaturePipeline::forward(ConstTensorView weight, const RowTransform& transform) {
  check_device("forward", "weight", weight, options_.device);
  HALO_EXPECTS(weight.rows == source_.cols(), "weight has " + std::to_string(weight.rows) +
                                                  " rows, expected one per feature column (" +
                                                  std::to_string(source_.cols()) + ")");
  Tensor y = Tensor::empty(source_.rows(), weight.cols, options_.device);
  const TensorView out = y.view();
  stream(transform, [&](TensorView rows, std::int64_t first_row) {
    kernels::gemm(rows, kernels::Transpose::no, weight, kernels::Transpose::no,
                  out.slice_rows(first_row, first_row + rows.rows));
  });
  return y;
}

void FeaturePipeline::backward_weight(ConstTensorView grad, TensorView grad_weight, const RowTransform& transform) {
  check_device("backward_weight", "grad", grad, options_.device);
  check_device("backward_weight", "grad_weight", grad_weight, options_.device);
  HALO_EXPECTS(grad.rows == source_.rows(), "grad has " + std::to_string(grad.rows) + " rows, expected " +
                                                std::to_string(source_.rows()) + " (one per feature row)");
  HALO_EXPECTS(grad_weight.rows == source_.cols() && grad_weight.cols == grad.cols,
               "grad_weight must be " + std::to_string(source_.cols()) + " x " + std::to_string(grad.cols) + ", got " +
                   std::to_string(grad_weight.rows) + " x " + std::to_string(grad_weight.cols));
  stream(transform, [&](TensorView rows, std::int64_t first_row) {
    kernels::gemm(rows, kernels::Transpose::yes, grad.slice_rows(first_row, first_row + rows.rows),
                  kernels::Transpose::no, grad_weight, 1.0f, 1.0f);
  });
}

Array<float> FeaturePipeline::aggregate(const graph::CsrGraph& a) {
  if (options_.device.is_cuda())
    throw InvalidArgument("FeaturePipeline::aggregate: the column panels are multiplied on the host with a host "
                          "CSR; build this pipeline for the cpu, not " + options_.device.to_string() +
                          " (FeatureInput does, then streams the result to the GPU)");
  const std::int64_t n = source_.rows();
  const std::int64_t cols = source_.cols();
  HALO_EXPECTS(a.num_cols() == n, "the graph has " + std::to_string(a.num_cols()) +
                                      " columns, expected one per feature row (" + std::to_string(n) + ")");
  stages_.clear();
  const std::int64_t n_out = a.num_rows();
  const std::int64_t cache_bytes = cache_ != nullptr ? cache_->bytes() : 0;
  const std::int64_t column_bytes = (options_.staging_buffers * n + n_out) * float_bytes;
  const std::int64_t minimum = cache_bytes + column_bytes;
  HALO_EXPECTS(cols == 0 || options_.budget_bytes >= minimum,
               "a budget of " + bytes_text(options_.budget_bytes) + " cannot hold " +
                   std::to_string(options_.staging_buffers) + " input panels of " + std::to_string(n) +
                   " rows and an output panel of " + std::to_string(n_out) +
                   " rows, one column wide, plus a cache of " + bytes_text(cache_bytes) + ": the minimum is " +
                   bytes_text(minimum));
  Array<float> z = Array<float>::matrix(n_out, cols);
  if (cols == 0 || n_out == 0) return z;
  // At most the CPU SpMM's panel width: a wider panel would be copied again, into a block the
  // budget does not count.
  const std::int64_t width =
      std::min({cols, kernels::cpu_spmm_panel_columns, (options_.budget_bytes - cache_bytes) / column_bytes});
  const std::int64_t panels = ceil_div(cols, width);
  std::vector<Tensor> inputs;
  for (int s = 0; s < options_.staging_buffers; ++s) inputs.push_back(Tensor::empty(n, width));
  Tensor output = Tensor::empty(n_out, width);

  // Panel p: columns [p · width, min(cols, (p + 1) · width)), stored contiguously.
  const auto panel = [&](float* data, std::int64_t rows, std::int64_t job) {
    const std::int64_t w = std::min(cols, (job + 1) * width) - job * width;
    return TensorView{data, rows, w, w, kernels::Device::cpu()};
  };
  const std::int64_t block_rows =
      std::max<std::int64_t>(1, aggregate_block_bytes / std::max<std::int64_t>(source_.row_bytes(), 1));
  const auto fill = [&](std::int64_t job, int slot) {
    const TensorView in = panel(inputs[static_cast<std::size_t>(slot)].data(), n, job);
    for (std::int64_t r = 0; r < n; r += block_rows) {
      const std::int64_t end = std::min(n, r + block_rows);
      source_.prefetch(end, std::min(n, end + block_rows));
      source_.read({r, end, job * width, job * width + in.cols}, in.slice_rows(r, end));
      source_.release(r, end);
    }
  };

  FeaturePassStats pass;
  pass.passes = 1;
  pass.chunks = panels;
  detail::StagingRing ring(options_.staging_buffers, panels, fill);
  for (std::int64_t job = 0; job < panels; ++job) {
    const int slot = ring.acquire(job);
    const auto start = std::chrono::steady_clock::now();
    const TensorView result = panel(output.data(), n_out, job);
    kernels::spmm(a, panel(inputs[static_cast<std::size_t>(slot)].data(), n, job), result);
    kernels::copy(result, TensorView{z.data() + job * width, n_out, result.cols, cols, kernels::Device::cpu()});
    pass.compute_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ring.release(job);
  }
  ring.finish();
  pass.wait_seconds = ring.wait_seconds();
  pass.fill_seconds = ring.fill_seconds();
  pass.bytes_to_device = n * cols * float_bytes;
  pass.bytes_from_source = source_.stored_bytes();
  record(pass);
  return z;
}

}  // namespace halo::train
