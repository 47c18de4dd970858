// FeaturePipeline: the first layer's products with input features that do not fit the "device"
// (issue #7). X is streamed in row chunks through 2 or 3 staging buffers that, with the optional
// FeatureCache, fit a byte budget; a worker thread fills chunk i + 1 while chunk i is multiplied,
// and only the narrow results stay resident. On the CPU backend the "device" is the budgeted set
// of host tensors (staging, cache) and the worker stands for the copy engine, so the budget, the
// chunking and the overlap are exercised without a GPU. On a GPU the same worker assembles each
// chunk in a pinned host buffer (or, when the source's rows are page-locked themselves, reads
// them where they are) and queues its copy on a copy stream of its own
// (kernels/cuda/staging_copies.hpp) into a device staging buffer, the cached rows coming from the
// device cache, while halo's stream multiplies the chunk before.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "graph/base/array.hpp"
#include "graph/csr.hpp"
#include "kernels/cuda/staging_copies.hpp"
#include "kernels/device.hpp"
#include "kernels/dropout.hpp"
#include "kernels/tensor.hpp"
#include "train/features/feature_cache.hpp"
#include "train/features/feature_source.hpp"

namespace halo::train {

struct FeaturePipelineOptions {
  // "Device" bytes for the staging buffers and the cache together (the cache, when given, is
  // resident for the pipeline's lifetime and counts against this).
  std::int64_t budget_bytes = 0;
  // 2 (double buffering) or 3 (triple buffering).
  int staging_buffers = 2;
  // Rows per chunk; 0 = as many as the budget left by the cache allows (at most all rows).
  std::int64_t chunk_rows = 0;
  // Where the staging buffers live and the products run: the CPU, or a GPU (then the cache, when
  // given, must be on it too, and the weights and gradients passed in).
  kernels::Device device;
};

// How a budget is split when the cache fills the memory the staging buffers leave.
struct FeatureBudgetSplit {
  std::int64_t chunk_rows = 0;   // rows per staging buffer
  std::int64_t cache_bytes = 0;  // the budget to give FeatureCache::build
};

// The rule used with --feature-memory-budget: the staging buffers take a quarter of the budget
// (at least one row each, at most all rows), the cache the rest (at most all rows). A staging row
// costs cols floats plus `extra_staging_row_bytes` (a GPU slot's 16-bit copy of the row, widened
// there; FeaturePipeline::staging_row_bytes). Throws InvalidArgument naming the minimum
// (staging_buffers staging rows) when the budget is below it. O(1).
FeatureBudgetSplit split_feature_budget(std::int64_t budget_bytes, std::int64_t rows, std::int64_t cols,
                                        int staging_buffers, std::int64_t extra_staging_row_bytes = 0);

// What one pass (or, summed, several) cost.
struct FeaturePassStats {
  std::int64_t passes = 0;
  std::int64_t chunks = 0;              // staging fills (column panels for aggregate)
  std::int64_t bytes_to_device = 0;     // bytes copied from the source into staging (float32)
  std::int64_t bytes_from_source = 0;   // the same rows' bytes as the source stores them (half for 16 bits)
  std::int64_t cache_hits = 0;          // rows taken from the cache
  std::int64_t cache_misses = 0;        // rows read from the source
  double wait_seconds = 0.0;            // compute side blocked waiting for the worker
  double compute_seconds = 0.0;         // compute side in the GEMM / SpMM and copy-out
  double fill_seconds = 0.0;            // worker filling staging buffers (copies and transform)

  // cache_hits / (cache_hits + cache_misses), 0 when no row was read.
  double hit_rate() const;
  FeaturePassStats& operator+=(const FeaturePassStats& other);
};

// A per-chunk transform applied in place to the staged rows before they are multiplied:
// fn(rows, first_row) where `rows` holds the rows [first_row, first_row + rows.rows) of X. It must
// be a pure function of the values and of the row numbers (so backward_weight can recompute
// it), and must not keep the view. On the CPU it runs on the pipeline's worker, right after the
// chunk is staged, with OpenMP loops in it serial on that thread (see FeaturePipeline::stream); on
// a GPU it runs on the calling thread with `rows` in device memory, queued on halo's stream
// before the chunk's products (the cached rows reach the chunk on the device only).
using RowTransform = std::function<void(kernels::TensorView rows, std::int64_t first_row)>;

// The input dropout of a first layer as a RowTransform: kernels::dropout_forward with `key`, row
// r keyed on global_ids[r] (global_ids.data null: on r itself), so the mask is the one
// train::Dropout draws for the whole matrix. p = 0 gives an empty transform. global_ids must stay
// alive while the transform is used.
RowTransform dropout_rows(float p, kernels::DropoutKey key, kernels::IndexView global_ids);

class FeaturePipeline {
 public:
  // Streams `source` (kept alive by the caller) with the rows of `cache` (may be null; built from
  // this source, kept alive) resident. Throws InvalidArgument when staging_buffers is not 2 or 3,
  // or when the budget cannot hold the cache plus staging_buffers chunks of chunk_rows rows (one
  // row when chunk_rows is 0); the message names the minimum budget. Allocates the staging
  // buffers on first use, so a pipeline used only for aggregate() never holds them.
  FeaturePipeline(const FeatureSource& source, const FeaturePipelineOptions& options,
                  const FeatureCache* cache = nullptr);

  // The streamed matrix's extents (the source's).
  std::int64_t rows() const { return source_.rows(); }
  std::int64_t cols() const { return source_.cols(); }
  std::int64_t chunk_rows() const { return chunk_rows_; }
  std::int64_t num_chunks() const;
  int staging_buffers() const { return options_.staging_buffers; }
  // Bytes of the staging buffers (allocated or not).
  std::int64_t staging_bytes() const;
  // Bytes a staging row of `source` takes on `device`: its floats, plus, on a GPU, its 16-bit
  // copy when the source stores 16 bits (uploaded as stored, widened on the GPU).
  static std::int64_t staging_row_bytes(const FeatureSource& source, const kernels::Device& device);
  // The same for a row of `cols` values stored at `stored_value_bytes` (4, or 2 for 16 bits),
  // before any source exists (the trainer's early check of a forced budget).
  static std::int64_t staging_row_bytes(std::int64_t cols, std::int64_t stored_value_bytes,
                                        const kernels::Device& device);

  // Y = f(X) · W: `weight` is cols x out (on the pipeline's device); returns rows x out there.
  // No sum crosses chunks: a row of Y is a row of its chunk's GEMM. OpenBLAS (and cuBLAS) pick
  // their kernel by the product's shape (small products and single rows take other paths), so
  // values may differ from one in-memory GEMM by float32 rounding (measured: under 1e-6 of the
  // result's scale; tests hold 1e-5). For a fixed chunk size and thread count the result is bit
  // for bit the same with or without a cache and from memory or a map. Cost: one streaming pass
  // over X (X's bytes less the cached rows') and 2 · rows · cols · out flops.
  kernels::Tensor forward(kernels::ConstTensorView weight, const RowTransform& transform = {});

  // grad_weight += f(X)ᵀ · G: `grad` is rows x out, grad_weight cols x out (on the pipeline's
  // device); f is recomputed
  // chunk by chunk, nothing of the forward is kept. The sum over rows is taken chunk by chunk in
  // row order (one more float32 rounding per chunk), so it differs from one in-memory GEMM by
  // rounding only: tests hold it within 1e-5 of the result's scale, down to one-row chunks. For a
  // fixed chunk size and thread count, bit for bit the same with or without a cache. Cost: one
  // streaming pass over X and 2 · rows · cols · out flops.
  void backward_weight(kernels::ConstTensorView grad, kernels::TensorView grad_weight,
                       const RowTransform& transform = {});

  // Z = Â · X, the first aggregation computed once (--precompute-first-aggregation; valid when
  // nothing random touches X before it), with a.num_cols() == rows. Streamed by column panels,
  // not row chunks: a row of Z needs rows of X from anywhere in the graph, while a panel of Z
  // needs only the same panel of X. Panel p (all rows, w columns) is staged by the worker while
  // panel p - 1 goes through kernels::spmm, and each result panel is copied out into Z's columns.
  // kernels::spmm adds each value's terms in CSR order whatever the width, so Z holds the
  // in-memory SpMM's values bit for bit. The budget left by the cache holds staging_buffers input
  // panels and one output panel: w = budget / ((staging_buffers · rows + a.num_rows()) · 4), at
  // most kernels::cpu_spmm_panel_columns (so that spmm multiplies the panel as it is);
  // InvalidArgument names the minimum (w = 1) when even that does not fit. Releases the staging
  // buffers first. Z (a.num_rows() x cols) is host memory as large as X; wrap it in
  // FeatureSource::from_array to stream later epochs from it. Cost: cols / w passes over the pages
  // of X (each value copied once), O(nnz · cols) flops. On the host only (a pipeline for a GPU
  // throws InvalidArgument): Z is computed once, then a GPU run streams it like X.
  Array<float> aggregate(const graph::CsrGraph& a);

  // One streaming pass over X in row order, the primitive forward and backward_weight are written
  // on (and the first layer's inputs, train/layers/layer_input.hpp, for several products per pass): the
  // worker stages chunk after chunk (cache plus source) and applies `transform` to it; the
  // calling thread then runs consume(rows, first_row), rows being the transformed rows
  // [first_row, first_row + rows.rows) in a staging buffer that is reused once consume returns.
  // The transform belongs to the worker because the compute side would otherwise alternate an
  // OpenMP region (the transform's kernel) with an OpenBLAS call (the GEMM) for every chunk, and
  // each thread pool spins while the other runs: on 2 cores that took a third more time than
  // the whole in-memory epoch's first layer. Records one pass in last_pass() and total(). An
  // exception from either side ends the pass and reaches the caller, the worker stopped. On a GPU
  // the worker's fill is the chunk's copies (source rows through a pinned buffer, 16-bit rows as
  // stored and widened on the GPU, cached rows device to device) and ends when they have landed; `rows` is then device memory, and consume
  // queues its work on halo's stream (which the slot's next fill waits for through an event, so
  // consume need not wait for its kernels).
  using ChunkConsumer = std::function<void(kernels::TensorView rows, std::int64_t first_row)>;
  void stream(const RowTransform& transform, const ChunkConsumer& consume);

  // The last pass, and every pass so far.
  const FeaturePassStats& last_pass() const { return last_; }
  const FeaturePassStats& total() const { return total_; }

 private:
  void record(const FeaturePassStats& pass);
  // The staging slot's first `rows` rows (host tensor, or the GPU slot's device buffer).
  kernels::TensorView slot_rows(int slot, std::int64_t rows);
  void allocate_staging();

  const FeatureSource& source_;
  const FeatureCache* cache_;
  FeaturePipelineOptions options_;
  std::int64_t chunk_rows_ = 0;
  std::vector<kernels::Tensor> stages_;                   // CPU staging
  std::unique_ptr<kernels::cuda::StagingCopies> copies_;  // GPU staging
  bool pinned_source_ = false;                            // GPU: the source's rows are page-locked
  FeaturePassStats last_;
  FeaturePassStats total_;
};

}  // namespace halo::train
