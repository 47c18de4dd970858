// FeatureInput: the first layer's input for a whole training job, set up once from the memory
// plan's decision (issue #7): the features resident on the device (the in-memory path), or a
// FeatureSource streamed through a FeaturePipeline with a FeatureCache in the rest of the budget;
// with --precompute-first-aggregation, Â·X computed once before training (in memory, or by column
// panels through the pipeline) so the first layer needs no SpMM. The Model's first stage reads it
// through layer_input().
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/base/array.hpp"
#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/features/feature_cache.hpp"
#include "train/features/feature_pipeline.hpp"
#include "train/features/feature_source.hpp"
#include "train/layers/aggregation.hpp"
#include "train/layers/layer_input.hpp"

namespace halo::train {

struct FeatureInputOptions {
  bool streamed = false;               // stream through a FeaturePipeline instead of a resident tensor
  std::int64_t budget_bytes = 0;       // streamed: device bytes of the staging buffers and the cache
  int staging_buffers = 2;
  bool normalize_rows = false;         // divide each row by its sum (TrainConfig::normalize_features)
  bool precompute_aggregation = false; // Â·X once, in place of the first layer's SpMM
  bool keep_features = true;           // with precompute: the first layer still multiplies X (GraphSAGE)
  kernels::Device device;
};

class FeatureInput {
 public:
  // `features` (rows x cols, host: heap or a file map, float32 or 16 bits) must outlive this
  // object; resident 16-bit features are widened once into the resident float32 copy, streamed
  // ones chunk by chunk as they are staged (at half the bytes read from the source). `aggregation` is
  // the first layer's operator (Â: GCN's or the mean), needed only with precompute_aggregation;
  // `scores` ranks the rows for the cache (empty: all equal, so the lowest ids are cached).
  //
  // Resident: copies the features to options.device (normalising the copy), and with precompute
  // computes aggregation.forward of it (collective on a distributed run, like any forward).
  // Streamed: splits the budget (split_feature_budget: a quarter for 2-3 staging buffers, the rest
  // for the cache; halved between X and Â·X when both are streamed), builds the cache (reading
  // the cached rows once) and the pipeline; the normalisation becomes a per-chunk transform. With
  // precompute, Â·X is computed by FeaturePipeline::aggregate within the budget and kept in host
  // memory; that needs the operator as one in-memory CSR (a LocalAggregation), so a rank of a
  // partitioned run refuses it (UnsupportedError), as it refuses normalisation with precompute
  // (the row sums would need a pass of their own), as it refuses it on a GPU (the column panels'
  // SpMM runs on the CPU only). On a GPU the cache and the staging buffers are GPU memory, the
  // source stays in host memory. Throws InvalidArgument, naming the minimum,
  // when the budget cannot hold two staging buffers of one row (or one column panel for Â·X).
  FeatureInput(FeatureSource features, const FeatureInputOptions& options, Aggregation* aggregation,
               const std::vector<double>& scores);
  FeatureInput(const Array<float>& features, const FeatureInputOptions& options, Aggregation* aggregation,
               const std::vector<double>& scores)
      : FeatureInput(FeatureSource::borrow(features), options, aggregation, scores) {}
  FeatureInput(const FeatureInput&) = delete;
  FeatureInput& operator=(const FeatureInput&) = delete;

  // The first layer's input (no dropout: the Model adds it per step). Its handles point into this
  // object.
  const LayerInput& layer_input() const { return input_; }
  bool streamed() const { return options_.streamed; }
  // The features as given (rows, columns, storage).
  const FeatureSource& features() const { return x_stream_.source; }
  bool precomputed() const { return options_.precompute_aggregation; }

  // Every streaming pass so far, Â·X's panels included (all zero when resident).
  FeaturePassStats stats() const;
  // Rows per staging chunk, rows and bytes held by the caches, bytes of the staging buffers (of
  // every pipeline); 0 when resident.
  std::int64_t chunk_rows() const;
  std::int64_t cache_rows() const;
  std::int64_t cache_bytes() const;
  std::int64_t staging_bytes() const;
  // Whether any feature value is negative (the row normalisation's warning). Reads every value;
  // from a file map block by block, releasing the pages as it goes. O(rows · cols), one thread.
  bool has_negative_values() const;

 private:
  // One streamed matrix: its source, cache and pipeline.
  struct Stream {
    FeatureSource source;
    FeatureCache cache;
    std::optional<FeaturePipeline> pipeline;
  };
  void open_stream(Stream& s, std::int64_t budget_bytes, const std::vector<double>& scores);
  void set_up_resident(Aggregation* aggregation);
  void set_up_streamed(Aggregation* aggregation, const std::vector<double>& scores);

  FeatureInputOptions options_;
  kernels::Tensor x_;           // resident X
  kernels::Tensor aggregated_;  // resident Â·X
  Stream x_stream_;
  Stream aggregated_stream_;
  FeaturePassStats precompute_stats_;
  LayerInput input_;
};

}  // namespace halo::train
