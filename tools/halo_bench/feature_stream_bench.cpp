// halo-bench gpu-feature-streaming: one FeaturePipeline pass over features that do not fit its
// budget, timed with the copies alone and with the X·W GEMMs (features page-locked, read where
// they are, pageable, through the pinned staging, and stored as float16, crossing at half the
// bytes and widened on the GPU), against kernels::cuda::pinned_upload_bandwidth in the same run;
// then train() on a generated graph in GPU memory and streamed (float32 and float16).
#include "tools/halo_bench/feature_stream_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "kernels/device.hpp"
#include "tools/common/program.hpp"
#ifdef HALO_WITH_CUDA
#include "datasets/half_features.hpp"
#include "datasets/synth.hpp"
#include "graph/base/parallel.hpp"
#include "graph/base/random.hpp"
#include "kernels/cuda/memory.hpp"
#include "kernels/cuda/staging_copies.hpp"
#include "kernels/tensor.hpp"
#include "train/features/feature_pipeline.hpp"
#include "train/features/feature_source.hpp"
#include "train/trainer.hpp"
#endif

namespace halo::tools {
namespace {

#ifdef HALO_WITH_CUDA

using kernels::Device;
using kernels::Tensor;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// rows x cols uniform in [-1, 1), one random stream per block of rows (thread-count independent).
Array<float> random_features(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  Array<float> a = Array<float>::matrix(rows, cols);
  constexpr std::int64_t block = 4096;
  float* data = a.data();
  parallel_for(0, (rows + block - 1) / block, [&](std::int64_t b) {
    RandomStream rng(seed, static_cast<std::uint64_t>(b));
    const std::int64_t end = std::min(rows, (b + 1) * block) * cols;
    for (std::int64_t i = b * block * cols; i < end; ++i) data[i] = 2.0f * to_unit_float(rng.next_u32()) - 1.0f;
  });
  return a;
}

// Median seconds of `repeat` passes after one warm-up, each ending when the GPU is idle.
template <class F>
double median_seconds(int repeat, F&& pass) {
  pass();
  kernels::cuda::synchronize(0);
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    pass();
    kernels::cuda::synchronize(0);
    times.push_back(seconds_since(start));
  }
  std::nth_element(times.begin(), times.begin() + repeat / 2, times.end());
  return times[static_cast<std::size_t>(repeat / 2)];
}

// The passes over `source` with the pipeline's copies only and with X·W (W: cols x 64). Rates are
// of the float32 matrix's bytes (what the GEMMs read), and of the bytes stored (what crossed).
nlohmann::json time_passes(const GpuFeatureStreamingBench& o, const train::FeatureSource& source, double reference) {
  train::FeaturePipelineOptions p;
  p.budget_bytes = static_cast<std::int64_t>(o.budget_fraction * static_cast<double>(source.bytes()));
  p.staging_buffers = o.staging_buffers;
  p.device = Device::cuda();
  train::FeaturePipeline pipeline(source, p);
  const Tensor w = Tensor::full(source.cols(), 64, 0.01f, Device::cuda());
  const double copies =
      median_seconds(o.repeat, [&] { pipeline.stream({}, [](kernels::TensorView, std::int64_t) {}); });
  const double gemm = median_seconds(o.repeat, [&] { pipeline.forward(w.view()); });
  const double bytes = static_cast<double>(source.bytes());
  return {{"budget_bytes", p.budget_bytes},
          {"chunk_rows", pipeline.chunk_rows()},
          {"chunks", pipeline.num_chunks()},
          {"copies_only_s", copies},
          {"copies_only_bytes_per_s", bytes / copies},
          {"copies_only_vs_pinned_memcpy", bytes / copies / reference},
          {"copies_only_stored_bytes_per_s", static_cast<double>(source.stored_bytes()) / copies},
          {"forward_s", gemm},
          {"forward_bytes_per_s", bytes / gemm},
          {"forward_vs_pinned_memcpy", bytes / gemm / reference},
          {"wait_s_last_pass", pipeline.last_pass().wait_seconds}};
}

nlohmann::json train_summary(const train::TrainSummary& s) {
  const train::FeatureStreamingSummary& f = s.feature_streaming;
  const double epochs =
      s.runs.empty() ? 1.0 : static_cast<double>(std::max<std::size_t>(1, s.runs[0].epochs.size()));
  return {{"epoch_time_median_s", s.epoch_time_median_s},
          {"streamed", f.streamed},
          {"budget_bytes", f.budget_bytes},
          {"chunk_rows", f.chunk_rows},
          {"cache_rows", f.cache_rows},
          {"cached_fraction", f.cached_fraction},
          {"cache_hit_rate", f.cache_hit_rate},
          {"bytes_to_device_per_epoch", static_cast<double>(f.bytes_to_device) / epochs},
          {"bytes_from_source_per_epoch", static_cast<double>(f.bytes_from_source) / epochs},
          {"wait_s", f.wait_s},
          {"fill_s", f.fill_s},
          {"final_loss", s.runs.empty() || s.runs[0].epochs.empty() ? 0.0 : s.runs[0].epochs.back().loss}};
}
#endif

}  // namespace

int run_gpu_feature_streaming_bench(const GpuFeatureStreamingBench& o) {
  if (kernels::cuda_device_count() == 0) {
    const std::string reason =
        kernels::built_with_cuda() ? "no CUDA GPU is visible" : "this halo was built without CUDA";
    log_info("gpu-feature-streaming: skipped, " + reason);
    if (!o.json.empty())
      write_json(o.json, nlohmann::json{{"benchmark", "gpu-feature-streaming"}, {"skipped", reason}});
    return 0;
  }
#ifdef HALO_WITH_CUDA
  HALO_EXPECTS(o.rows > 0 && o.cols > 0 && o.repeat >= 1 && o.epochs >= 2 && o.budget_fraction > 0.0,
               "gpu-feature-streaming needs positive extents, repeats, a budget and at least 2 epochs");
  nlohmann::json result{{"benchmark", "gpu-feature-streaming"}};
  // The bus's reference: one pinned host->device copy of 512 MiB (at most the features' bytes).
  const auto reference_bytes =
      static_cast<std::size_t>(std::min<std::int64_t>(std::int64_t{512} << 20, o.rows * o.cols * 4));
  const double reference = kernels::cuda::pinned_upload_bandwidth(0, reference_bytes, o.repeat);
  result["pinned_memcpy_bytes"] = reference_bytes;
  result["pinned_memcpy_bytes_per_s"] = reference;
  log_info(fmt::format("gpu-feature-streaming: pinned cudaMemcpy host->device {:.1f} GB/s", reference / 1e9));

  {
    Array<float> x = random_features(o.rows, o.cols, 11);
    result["features_bytes"] = o.rows * o.cols * 4;
    result["pageable"] = time_passes(o, train::FeatureSource::borrow(x), reference);
    {
      const datasets::HalfFeatures half = datasets::narrow_features(x, HalfFormat::float16);
      result["float16"] = time_passes(o, train::FeatureSource::borrow(half), reference);
    }
    const kernels::cuda::PinnedRegistration pin(x.data(), static_cast<std::size_t>(x.size()) * sizeof(float));
    result["page_locked"] = time_passes(o, train::FeatureSource::borrow(x), reference);
    log_info(fmt::format("gpu-feature-streaming: streamed {:.1f} GB/s page-locked, {:.1f} GB/s pageable (copies only)",
                         result["page_locked"]["copies_only_bytes_per_s"].get<double>() / 1e9,
                         result["pageable"]["copies_only_bytes_per_s"].get<double>() / 1e9));
  }

  datasets::SbmOptions g;
  g.nodes = o.train_nodes;
  g.avg_degree = 16;
  g.features = o.train_features;
  g.classes = 8;
  g.seed = 5;
  datasets::Dataset ds = datasets::generate_sbm(g);
  train::ModelConfig m;
  m.kind = "gcn";
  m.layers = 2;
  m.hidden = 128;
  train::TrainConfig c;
  c.epochs = o.epochs;
  c.eval_every = o.epochs;
  c.device = Device::cuda();
  c.seed = 3;
  const train::TrainSummary memory = train::train(ds, m, c);
  Array<float>& features = ds.target().features;
  // The features are 4x the budget.
  c.feature_memory_budget = features.size() * static_cast<std::int64_t>(sizeof(float)) / 4;
  train::TrainSummary streamed;
  {
    const kernels::cuda::PinnedRegistration pin(features.data(),
                                                static_cast<std::size_t>(features.size()) * sizeof(float));
    streamed = train::train(ds, m, c);
  }
  // The same features stored as float16: half the bytes cross the bus, widened on the GPU.
  datasets::NodeType& target = ds.target();
  target.half_features = datasets::narrow_features(target.features, HalfFormat::float16);
  const std::int64_t feature_values = target.features.size();
  target.features = Array<float>();
  const train::TrainSummary streamed_f16 = train::train(ds, m, c);
  result["train"] = {{"nodes", o.train_nodes},
                     {"features", o.train_features},
                     {"feature_bytes", feature_values * 4},
                     {"in_memory", train_summary(memory)},
                     {"streamed", train_summary(streamed)},
                     {"streamed_float16", train_summary(streamed_f16)},
                     {"epoch_ratio", streamed.epoch_time_median_s / memory.epoch_time_median_s},
                     {"epoch_ratio_float16", streamed_f16.epoch_time_median_s / memory.epoch_time_median_s}};
  log_info(fmt::format("gpu-feature-streaming: GCN epoch {:.4f} s streamed at a 25 % budget, {:.4f} s in memory",
                       streamed.epoch_time_median_s, memory.epoch_time_median_s));
  if (!o.json.empty()) write_json(o.json, result);
#endif
  return 0;
}

}  // namespace halo::tools
