// The trainer's set-up of the first layer's input (issue #7): the memory plan with the features
// placed (resident or streamed, in host memory or on a GPU), the refusals of what cannot run, the
// FeatureInput options, and what is reported about it. Internal to
// train/detail/homogeneous_trainer.cpp, kept apart so the trainer loop stays readable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/base/array.hpp"
#include "kernels/device.hpp"
#include "train/features/feature_input.hpp"
#include "train/features/feature_pipeline.hpp"
#include "train/layers/aggregation.hpp"
#include "train/memory_plan.hpp"
#include "train/models/model_shape.hpp"
#include "train/trainer.hpp"
#include "train/training_problem.hpp"

namespace halo::train::detail {

// The problem's features (float32 or 16-bit, whichever it holds), borrowed.
FeatureSource problem_features(const TrainingProblem& problem);

// The passes between two readings of FeatureInput::stats().
FeaturePassStats passes_since(const FeaturePassStats& before, const FeaturePassStats& now);

// Sets `plan` to the problem's plan for `model` with "process before training" (process_bytes)
// first and the features as place_features places them (resident, or streamed with the forced
// budget or the spare memory), and returns that placement. O(items).
FeaturePlacement plan_memory(TrainingProblem& problem, const ModelShape& model, const TrainConfig& config,
                             std::int64_t process_bytes, std::int64_t available, MemoryPlan& plan);

// Sets `plan` to the plan of what a run on a GPU keeps there (gpu_memory_plan of the problem's
// plan for `model`) with the features as place_features places them in `gpu_bytes` of GPU memory
// (and config.memory_limit): resident when they fit, else streamed from host memory with the
// forced budget or the spare GPU memory as the budget of the device staging buffers and cache.
// A precomputed first aggregation counts on the GPU only beside resident features. Returns that
// placement. O(items).
FeaturePlacement plan_gpu_memory(TrainingProblem& problem, const ModelShape& model, const TrainConfig& config,
                                 std::int64_t gpu_bytes, MemoryPlan& plan);

// The plan of what a run on a GPU keeps there, from the problem's plan for the model (features
// resident, or their staging and cache when streamed): every item but the stored CSR, which stays on the host
// (the GPU holds the operators built from it), and the CPU SpMM's panel. The labels and splits stay on the host too,
// but their item stands for the rows and labels the loss kernels copy to the GPU per call (at most 16 bytes a vertex,
// as much as the item); and cuBLAS's workspace added. O(items).
MemoryPlan gpu_memory_plan(MemoryPlan plan);

// The memory of GPU `device` a run may plan for, in bytes: kernels::cuda::gpu_usable_bytes (what
// the driver reports free beside this process's context, plus what halo holds there already).
std::int64_t gpu_memory_bytes(const kernels::Device& device);

// Refuses a GPU plan that does not fit: InvalidArgument over limit_bytes (when > 0), as
// check_memory_plan; UnsupportedError over `gpu_bytes`, naming the device, the total and every item.
void check_gpu_memory_plan(const MemoryPlan& plan, std::int64_t limit_bytes, const kernels::Device& device,
                           std::int64_t gpu_bytes);

// What a run on `device` may use: the GPU's memory (gpu_memory_bytes), or what this process can
// still use of the host's (machine_available_bytes).
std::int64_t device_memory_available(const kernels::Device& device);

// Logs `plan` (its total, the limit and `available`, and at debug level its table) and refuses it
// when it does not fit: check_gpu_memory_plan on a GPU, check_memory_plan on the CPU.
void log_and_check_memory_plan(const MemoryPlan& plan, const TrainConfig& config, std::int64_t available);

// True when `plan` fits limit_bytes (when > 0) and `available` (when >= 0), as the checks above
// would pass it (the GPU's memory as `available` on a GPU).
bool plan_fits(const MemoryPlan& plan, std::int64_t limit_bytes, std::int64_t available);

// Says (log_info) which of the activation savings the plan counted apply to `model`: the dropouts
// taken in place on ReLU outputs, the layers whose Â·x backward recomputes (not the first when its
// features are streamed: it transforms them first).
void log_activation_savings(const ModelShape& model, const FeaturePlacement& placement);

// Refuses (InvalidArgument) feature settings that cannot work whatever the plan decides: a
// forced budget below two staging rows (naming the minimum; on a GPU a row of features stored at
// `stored_value_bytes` = 2 also holds its 16-bit copy), a precomputation with input dropout.
void check_feature_settings(const ModelConfig& m, const TrainConfig& config, const DatasetShape& shape,
                            std::int64_t stored_value_bytes);

// Says (log_info) when streamed features make a first layer that would aggregate them first in
// memory transform them first instead (its aggregation then carries the output width).
void log_streamed_first_layer(const ModelConfig& m, const TrainConfig& config, const ModelShape& model,
                              const FeaturePlacement& placement, const DatasetShape& shape);

// The FeatureInput of a run as placed: budget, normalisation, precomputation, and whether the
// first layer still multiplies X beside Â·X (GraphSAGE's root term).
FeatureInputOptions feature_input_options(const ModelConfig& m, const TrainConfig& config,
                                          const FeaturePlacement& placement);

// The cache's row scores: the first operator's row degrees when this process holds it as one
// CSR (empty otherwise, or when nothing is streamed). O(rows).
std::vector<double> cache_scores(Aggregation* aggregation, const FeaturePlacement& placement);

// The summary's description of the input (the streaming totals are added after training), and
// its one-line log message.
FeatureStreamingSummary describe_input(const FeatureInput& input, const FeaturePlacement& placement);
std::string input_line(const FeatureStreamingSummary& f);

}  // namespace halo::train::detail
