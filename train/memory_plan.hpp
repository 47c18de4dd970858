// The memory plan of a training run, made before the first epoch: bytes for the graph, its
// normalised copies, the features, the activations kept for backward, the parameters, their
// gradients and the optimiser state. A run that would not fit the caller's limit or the
// machine is refused with these numbers instead of failing halfway; features that do not fit
// are streamed instead (place_features, issue #7).
#pragma once

#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "graph/base/error.hpp"
#include "kernels/device.hpp"
#include "partition/partition_dir.hpp"
#include "train/models/model_shape.hpp"
#include "train/optimizer.hpp"

namespace halo::train {

// The item of the CPU SpMM's panel (kernels::cpu_spmm_workspace_bytes), which GPU runs do not use.
inline constexpr const char* cpu_spmm_panel_item = "SpMM panel (CPU)";
// The item of cuBLAS's workspace in a GPU's plan: Hopper's 32 MiB (kernels::cuda::
// cublas_workspace_bytes; 4 MiB on older GPUs, whose plan it overstates by 28 MiB).
inline constexpr const char* cublas_workspace_item = "cuBLAS workspace";
std::int64_t planned_cublas_workspace_bytes();

struct MemoryItem {
  std::string name;        // "graph (CSR)", "activations", ...
  std::int64_t bytes = 0;
};

struct MemoryPlan {
  std::vector<MemoryItem> items;

  std::int64_t total_bytes() const;
  // One "name  bytes  human" line per item and a total line, aligned (for the log).
  std::string table() const;
  // The same on one line: "graph (CSR) 1.2 MiB, ..., total 3.4 GiB (3650722201 bytes)".
  std::string one_line() const;
};

// The plan for training a model of shape `model` on `ds` with `optimizer` on one process, made
// before the model or its operators exist: the stored CSR, the operators GraphOperators builds
// for the model's kind (upper bound: a self loop per vertex, plus the transpose when the operator
// is not symmetric), the feature tensor, labels and splits, ModelShape::activation_bytes for
// every vertex (the logits and their gradient among them), parameters, gradients, the optimiser
// state (2x parameters for Adam/AdamW, 1x for SGD with momentum), and the CPU SpMM's panel when a
// layer is wider than it (cpu_spmm_panel_item).
// O(1) work; allocates nothing.
MemoryPlan plan_training_memory(const datasets::Dataset& ds, const ModelShape& model, const OptimizerConfig& optimizer);

// What a rank's plan needs of its part, without the part's arrays (from partition.json, or
// estimated before any part exists: partition/part_sizes.hpp).
struct PartShape {
  std::int64_t owned = 0;      // rows: the vertices the rank owns
  std::int64_t halo = 0;       // columns beyond them: the halo rows it receives
  std::int64_t send_rows = 0;  // owned rows its peers' halos read (with repeats over peers)
  std::int64_t entries = 0;    // stored entries of its rows
  bool wide_ids = false;       // column ids need 64 bits
  bool weighted = false;       // the CSR carries edge weights
  std::int64_t train = 0, valid = 0, test = 0;  // owned split vertices
  std::int64_t label_values = 0;                // int64 labels it holds (owned rows x label columns)
  std::int64_t feature_dim = 0;
  std::int64_t classes = 0;                     // logits' width
};

// The plan of one rank with a part of that shape: as plan_part_training_memory, from the counts
// alone. O(1); allocates nothing.
MemoryPlan plan_part_shape_memory(const PartShape& part, const ModelShape& model, const OptimizerConfig& optimizer);

// The plan of one rank training `model` on `part`: as above for the part's rows (its CSR's
// columns include the halo), the operator and its transpose, plus the halo exchange's tensors and
// buffers at the widest width exchanged. O(1) work; allocates nothing.
MemoryPlan plan_part_training_memory(const partition::Part& part, const ModelShape& model, const OptimizerConfig& optimizer);

// Where the first layer's features live during training (issue #7), as the plan decided.
struct FeaturePlacement {
  bool streamed = false;
  std::int64_t budget_bytes = 0;     // streamed: "device" bytes of the staging buffers and the cache
  std::int64_t in_flight_bytes = 0;  // streamed from a file map: its pages mapped at once while copied
};

// The pages of a mapped features file (rows x cols float32) that streaming with `budget_bytes`
// maps at once: one staging chunk (as split_feature_budget sizes it, 2 buffers) or one 4 MiB
// block of the cache's and the scans' reads, whichever is larger, at most the whole file; 0 when
// the features are not a map (their pages are then the process's already). O(1).
std::int64_t feature_pages_in_flight(std::int64_t budget_bytes, std::int64_t rows, std::int64_t cols, bool mapped);

// The plan's rule for the features (rows x cols): a forced budget (> 0) always streams with it.
// Otherwise the features stay resident when `resident_total` fits the bound (the limit when > 0,
// the available bytes when >= 0, the smaller of the two; no bound: always), and else stream with
// the spare memory beside `streamed_rest_total` (the plan streaming with a budget of 0) as the
// budget, less the file pages in flight, rounded down to whole MiB from 2 MiB up (so the chunking
// does not follow small changes of the memory measured). A spare below two staging rows leaves
// them resident, and check_memory_plan then refuses the resident plan with its numbers. O(1),
// deterministic.
FeaturePlacement place_features(std::int64_t resident_total, std::int64_t streamed_rest_total, std::int64_t rows,
                                std::int64_t cols, bool mapped, std::int64_t forced_budget, std::int64_t limit_bytes,
                                std::int64_t available_bytes);

// A budget that streams rows x cols features whole: their float32 bytes (what a precomputed Â·X
// streams as, at least what a 16-bit store does) in whole MiB and one more, the cache holding
// every row once filled. A rank of a job streams under it where it could keep its features
// resident but another rank streams (the ranks agree: a streamed first layer transforms first,
// and its halo exchange carries other columns). O(1).
std::int64_t whole_features_budget(std::int64_t rows, std::int64_t cols);

// `resident` (a plan with the features resident and no precomputation) for the first layer's
// input as placed: streamed, the "features" item becomes "features: staging and cache (streamed)"
// of the budget, followed by "features: file pages in flight" when nonzero; streamed or with the
// first aggregation precomputed (precomputed_bytes > 0, an item of its own), "activations" loses
// `input_activation_bytes` (ModelShape::input_activation_bytes: the input dropout's output and an
// aggregate-first layer's Â·x, neither of which exists then). With the aggregation precomputed
// and the features resident, a model that reads Â·X alone (features_kept false: GCN) frees X once
// Â·X is computed, before the model exists: "features" then becomes "features while Â·X is
// computed", what X outgrows the model's items by (activations, parameters, gradients, optimizer
// state; no item when it does not). O(items).
MemoryPlan plan_feature_input(MemoryPlan resident, std::int64_t input_activation_bytes,
                              const FeaturePlacement& placement, std::int64_t precomputed_bytes,
                              bool features_kept = true);

// Refuses `bytes` needed before anything is allocated: InvalidArgument when limit_bytes > 0 and
// they exceed it, UnsupportedError when available_bytes >= 0 and they exceed that; the message is
// "memory plan: WHAT, but the memory limit is L: ADVICE" (or "... this machine has A available").
void refuse_over_memory(std::int64_t bytes, const std::string& what, const std::string& advice,
                        std::int64_t limit_bytes, std::int64_t available_bytes);

// Refuses a plan that does not fit: InvalidArgument when limit_bytes > 0 and the total exceeds
// it; UnsupportedError when available_bytes >= 0 and the total exceeds it. Both messages name
// the total, the bound and every item (MemoryPlan::one_line).
void check_memory_plan(const MemoryPlan& plan, std::int64_t limit_bytes, std::int64_t available_bytes);

// Throws OutOfMemoryError for an allocation that failed (`failure`: what the allocator said) in a
// run whose plan had passed: "out of memory{where} although the memory plan allowed the run
// (plan: ITEMS, total T): FAILURE; peak P. ...", with advice. `where` is "" or " on cuda:N"; the
// peak is the process's resident set on the CPU, the tensors' on a GPU.
[[noreturn]] void throw_over_plan(const MemoryPlan& plan, const std::string& where, const kernels::Device& device,
                                  const std::string& failure);

// Runs `body`, the part of a run after its plan passed, and turns an allocation failure in it
// (std::bad_alloc, OutOfMemoryError from a GPU) into throw_over_plan's error. Returns body().
template <class Body>
auto under_memory_plan(const MemoryPlan& plan, const std::string& where, const kernels::Device& device, Body&& body)
    -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    throw_over_plan(plan, where, device, "an allocation in host memory failed");
  } catch (const OutOfMemoryError& e) {
    throw_over_plan(plan, where, device, e.what());
  }
}

// What this process can still use: MemAvailable of /proc/meminfo plus the process's own resident
// set (VmRSS; the dataset it already mapped counts towards the plan), at most the address space
// an RLIMIT_AS (ulimit -v) leaves it plus that resident set; -1 when unknown.
std::int64_t machine_available_bytes();

// The process's peak resident set (VmHWM of /proc/self/status) in bytes, or -1 when unknown.
std::int64_t process_peak_resident_bytes();
// The process's resident set now (VmRSS) in bytes, or -1 when unknown.
std::int64_t process_resident_bytes();
// What the plan's "process before training" item counts: the process's resident set (VmRSS) less
// the resident pages of the .npy files it maps (/proc/self/smaps). The dataset's arrays are such
// maps, and the plan counts them in items of their own (graph, features, labels): a graph already
// read through once must not count twice. -1 when unknown.
std::int64_t process_bytes_besides_arrays();

// Parses a byte count: digits with an optional fraction and an optional binary suffix
// K, M, G, T (also KB/KiB, ..., any case; 1G = 2^30 bytes), e.g. "8G", "512M", "1.5GiB", "4096".
// Throws InvalidArgument naming the text when it is not one, is negative or overflows.
std::int64_t parse_byte_size(const std::string& text);

// "1.5 GiB", "312 KiB", "17 B".
std::string format_bytes(std::int64_t bytes);

}  // namespace halo::train
