// halo-bench gpu-feature-streaming (issue #7): the bus rate of the feature pipeline on a GPU
// against a pinned cudaMemcpy measured in the same run, and a GCN epoch with its features
// streamed (4x the budget) against the same epoch with them in GPU memory.
#pragma once

#include <cstdint>
#include <string>

namespace halo::tools {

struct GpuFeatureStreamingBench {
  // The streaming passes: rows x cols float32 features in host memory (2 GiB by default).
  std::int64_t rows = std::int64_t{1} << 21;
  std::int64_t cols = 256;
  // The "device" budget of the passes, as a fraction of the features (staging only: no cache,
  // so every byte crosses the bus).
  double budget_fraction = 0.125;
  int staging_buffers = 3;
  int repeat = 5;
  // The training comparison: a generated SBM graph, GCN 2 x 128, budget a quarter of its features.
  std::int64_t train_nodes = 262144;
  std::int64_t train_features = 512;
  int epochs = 6;
  std::string json;
};

// Writes {"skipped": reason} and returns 0 where no GPU is visible (or CUDA is not built).
int run_gpu_feature_streaming_bench(const GpuFeatureStreamingBench& options);

}  // namespace halo::tools
