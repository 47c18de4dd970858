// The trainer: full-graph training of any model halo has, for one or more runs (seeds seed ..
// seed+runs-1), with evaluation, early stopping, OGB's reporting rule, checkpoints, the memory
// plan and timing. The C++ API behind halo-train: one call for one process, one for a rank.
//
//   halo::datasets::Dataset ds = halo::datasets::read_dataset_dir("data/cora");
//   halo::train::ModelConfig model;     // GCN, 2 layers, 16 hidden, ...; kind "rgcn" for acm
//   halo::train::TrainConfig config;    // 200 epochs, Adam, ...
//   halo::train::TrainSummary s = halo::train::train(ds, model, config,
//       [](int run, const halo::train::EpochRecord& r) { ... });
//   s.test_acc_mean, s.test_acc_std, s.runs[0].epochs[...]
//
// Rank r of P (under mpirun) trains part r of a partition directory:
//
//   halo::train::dist::MpiSession mpi;                 // once per process
//   halo::train::dist::MpiCommunicator comm(mpi);      // train/dist/mpi_communicator.hpp
//   halo::train::TrainSummary s = halo::train::train("data/cora-p4", comm, model, config);
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "kernels/device.hpp"
#include "train/dist/communicator.hpp"
#include "train/memory_plan.hpp"
#include "train/models/model_config.hpp"
#include "train/optimizer.hpp"
#include "train/run_tracker.hpp"

namespace halo::train {

struct TrainConfig {
  int epochs = 200;
  OptimizerConfig optimizer;
  int eval_every = 1;                  // evaluate (train/valid/test accuracy, valid loss) every k epochs and at the last
  EarlyStoppingConfig early_stopping;  // patience 0 = off
  int runs = 1;                        // run r uses seed + r
  std::uint64_t seed = 0;
  bool normalize_features = false;     // divide each feature row by its sum (tkipf/gcn preprocess_features)
  std::string checkpoint_dir;          // empty = no checkpoints
  int checkpoint_every = 0;            // save every k epochs (and when a run ends); 0 = only when a run ends
  // Non-empty: when a run ends, rank 0 writes what it predicted for every vertex of the labelled
  // type at its best evaluation to predictions_dir/run-NNNN/y_pred.npy, as OGB's evaluators take
  // it (train/detail/best_predictions.hpp): each vertex's class, int64 n x 1, or for a
  // multi-label task its scores (logits), float32 n x tasks.
  std::string predictions_dir;
  bool resume = false;                 // continue from checkpoint_dir's checkpoints where they exist
  bool allow_nonfinite = false;        // go on when the training loss is NaN or infinite (else stop, naming the epoch)
  bool verify_checksums = true;        // distributed runs: check each part's CRC-32s on read (its structure always is)
  std::int64_t memory_limit = 0;       // bytes; 0 = only the available memory (a GPU's own) bounds the plan
  int threads = 0;                     // OpenMP threads during train(); 0 = leave the current setting
  double boundary_sample_rate = 1.0;   // BNS-GCN: halo vertices kept per training epoch (distributed runs)
  // Feature streaming (issue #7): the "device" bytes for the first layer's features when they are
  // streamed (staging buffers and cache). 0 = the memory plan decides: resident when the plan fits
  // memory_limit and the machine, else streamed with the spare memory. > 0 always streams.
  std::int64_t feature_memory_budget = 0;
  // Compute Â·X once before training and use it in place of the first layer's SpMM (streamed, or
  // in memory when the features are resident). Needs input dropout 0 (Â·X is then constant).
  bool precompute_first_aggregation = false;
  // Where the model trains: the CPU, or one GPU (single process, features resident; streaming and
  // distributed runs are CPU-only for now, issues #7 and #6).
  kernels::Device device;
};

// Seconds of the training steps (forward, backward, optimiser) spent in each kernel family. On a
// GPU the kernels run behind the host: a family's seconds are those of its calls on the host
// (queueing, and waiting where a call returns a value), and the wait for the queued work at the
// end of each step falls into other_s.
struct TimeSplit {
  double spmm_s = 0.0;
  double gemm_s = 0.0;
  double halo_exchange_s = 0.0;  // halo exchanges (packing, messages, unpacking)
  double all_reduce_s = 0.0;     // the all-reduces of gradients, statistics and the loss (on GPUs
                                 // also the wait for the backward work still queued before them)
  double other_s = 0.0;  // everything else: other kernels, allocation, the loss, the optimiser
};

// One rank's share of a run's work, summed over the epochs it trained (training steps only).
struct RankTraffic {
  int rank = 0;
  std::int64_t owned_vertices = 0;
  std::int64_t halo_vertices = 0;
  int epochs = 0;
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
  double halo_s = 0.0;
  double all_reduce_s = 0.0;
  double compute_s = 0.0;  // the rest of the training steps
  std::int64_t peak_resident_bytes = -1;  // the rank's peak resident set (VmHWM), -1 if unknown
  std::int64_t planned_bytes = 0;         // the rank's memory plan total, to set beside it
};

struct RunResult {
  int run = 0;
  std::uint64_t seed = 0;
  std::vector<EpochRecord> epochs;
  int best_epoch = 0;           // the evaluated epoch with the best validation accuracy (OGB's rule)
  double valid_acc = 0.0;       // at best_epoch
  double test_acc = 0.0;        // at best_epoch
  double final_test_acc = 0.0;  // at the last evaluated epoch (what tkipf/gcn reports)
  bool stopped_early = false;
  bool resumed = false;         // started from a checkpoint
  std::string predictions_path;  // TrainConfig::predictions_dir: the file written; empty if none
  int predictions_epoch = 0;     // the epoch it holds the predictions of (best_epoch unless resumed)
  TimeSplit time_split;         // over the epochs this process ran
};

// How the first layer got its features (this process's rows), and what streaming them cost.
struct FeatureStreamingSummary {
  bool streamed = false;
  bool precomputed_aggregation = false;  // Â·X computed once before training
  std::int64_t feature_bytes = 0;        // X's bytes (this process's rows) as float32
  std::string feature_dtype = "f32";     // how X is stored on the host: f32, f16 or bf16
  std::int64_t budget_bytes = 0;         // streamed: staging buffers and cache
  std::int64_t chunk_rows = 0;           // streamed: rows per staging buffer
  std::int64_t staging_bytes = 0;
  std::int64_t cache_rows = 0;
  std::int64_t cache_bytes = 0;
  double cached_fraction = 0.0;          // cache_rows / rows of X
  // Over every training step of every run (the evaluation passes are not counted):
  std::int64_t passes = 0;
  std::int64_t bytes_to_device = 0;
  std::int64_t bytes_from_source = 0;    // bytes_to_device as the features are stored (half for 16 bits)
  double cache_hit_rate = 0.0;
  double wait_s = 0.0;                   // blocked waiting for the worker
  double fill_s = 0.0;                   // the worker filling staging buffers
};

struct TrainSummary {
  std::vector<RunResult> runs;
  // What the *_acc fields hold: "acc" (accuracy), or OGB's "rocauc" for a multi-label task.
  std::string metric = "acc";
  double test_acc_mean = 0.0;   // over runs, of RunResult::test_acc
  double test_acc_std = 0.0;    // sample standard deviation (n - 1); 0 for one run
  double valid_acc_mean = 0.0;
  double valid_acc_std = 0.0;
  double final_test_acc_mean = 0.0;
  double epoch_time_median_s = 0.0;  // median of EpochRecord::time_s over every epoch of every run
  TimeSplit time_split;              // summed over runs
  MemoryPlan memory_plan;
  // What the layers recomputed in backward (ModelConfig::recompute, "auto" resolved by the plan):
  // "aggregation", "layer" or "none".
  std::string recompute = "none";
  std::int64_t tensor_peak_bytes = 0;     // most bytes held by tensors on the device at once
  std::int64_t device_peak_bytes = -1;    // GPU: most bytes halo held there at once, tensors or not; -1 on the CPU
  // GPU: what cuSPARSE's kept state held at the end (kernels::spmm_library_bytes), among
  // device_peak_bytes but in no plan item; -1 on the CPU.
  std::int64_t cusparse_bytes = -1;
  std::int64_t peak_resident_bytes = -1;  // the process's peak resident set (VmHWM), -1 if unknown
  int threads = 0;                        // OpenMP threads used
  int world_size = 1;
  std::vector<RankTraffic> ranks;         // every rank's traffic over all runs, in rank order
  double boundary_sample_rate = 1.0;
  FeatureStreamingSummary feature_streaming;
  kernels::Device device;
};

// Called after every epoch that train() computes (epochs restored from a checkpoint are not
// replayed), with the run index 0 .. runs-1.
using EpochCallback = std::function<void(int run, const EpochRecord& record)>;

// Trains `runs` models of model.kind on `ds`: GCN or GraphSAGE on a homogeneous dataset, R-GCN
// on a heterogeneous one (multiclass, with labels and a split; homogeneous ones with features).
// Refuses (InvalidArgument) an unknown kind, settings the kind does not have, and a dataset of
// the other family, naming the kinds that fit it.
//
// GCN / GraphSAGE: before the first epoch it builds the graph operators once for all runs and
// checks the memory plan against config.memory_limit and the machine (throws InvalidArgument /
// UnsupportedError with the numbers). The plan also places the features (place_features):
// resident when they fit, else (or with config.feature_memory_budget) streamed through a
// FeaturePipeline whose cache fills the rest of the budget; streamed, a first layer that
// aggregates first (in_dim < out_dim) transforms first instead, unless
// precompute_first_aggregation gives it Â·x. Per epoch: one training step on the training vertices, then
// (every eval_every epochs) one evaluation pass with dropout off. Deterministic: a run's losses
// depend on the seed, not on the thread count beyond float rounding of parallel sums, and a run
// resumed from a checkpoint repeats an uninterrupted one's losses bitwise (same thread count and
// feature placement). Streamed features give the resident run's losses up to float rounding (the
// first layer's GEMMs go chunk by chunk; tests hold 1e-5 relative), the same for any cache size.
// On a GPU (config.device cuda:N) the operators, features, parameters and activations live on
// it, and an epoch reads back only scalars (the loss, the accuracy counts, the L2 term) and the
// batch-norm statistics (2 x hidden floats a layer); the loss and accuracy kernels copy the
// split's rows and labels from the host with each call. The memory plan is of the GPU (the
// stored CSR stays on the host), checked against its memory and config.memory_limit. The losses
// are the CPU's up to float rounding (same weights and dropout masks; tests hold 1e-4 relative).
// Throws InvalidArgument for bad settings (a budget below two staging rows names the minimum);
// UnsupportedError for a device this build or machine cannot use, and on a GPU for feature
// streaming or a precomputed first aggregation.
//
// R-GCN: an HeteroModel over all vertex types, on the labelled type's split. Types with features
// feed them in; types without get embedding tables updated sparsely after each optimiser step.
// On a GPU everything an epoch touches lives there (features, tables and their sparse Adam, the
// layers' relation matrices, uploaded once), and an epoch reads back only what a GCN epoch does —
// unless the tables are streamed: config.feature_memory_budget > 0 (on any device), or on a GPU
// tables that would take more than half of the GPU memory the features leave, stay in host
// memory with their sparse Adam and stream through the first layer (HeteroModelConfig::
// table_stream_budget; the budget given, or a sixteenth of the GPU's memory). In training only
// the training rows' logits are computed. Throws UnsupportedError for boundary sampling and a
// precomputed first aggregation. The memory plan (parameters, gradients, optimiser state,
// activations, tables; on a GPU of the GPU's memory) is checked as for GCN. Checkpoints keep the
// tables, their Adam moments and per-row step counts: a resumed run repeats an uninterrupted
// one's losses bitwise.
//
// Stopping: after every epoch train() looks at halo::stop_signal() (graph/base/interrupt.hpp; a
// program's SIGINT / SIGTERM handler sets it). When set it saves the run's checkpoint (with
// config.checkpoint_dir) and throws halo::Interrupted naming the epoch, the checkpoint and
// --resume; distributed, the ranks agree on it, so all stop after the same epoch.
TrainSummary train(const datasets::Dataset& ds, const ModelConfig& model, const TrainConfig& config,
                   const EpochCallback& on_epoch = {});

// Rank comm.rank() of comm.size() opens part comm.rank() of the partition directory (and nothing
// else), builds its halo exchanges and its rows of the graph operators, and trains the model one
// process would train on the whole graph, with the weight gradients, batch-norm statistics, loss
// and accuracy counts all-reduced: every rank returns the same summary. Collective: every rank
// calls it with the same arguments. A rank that throws leaves its peers waiting in a collective:
// the caller must then end the world (MpiSession::abort), as halo-train does after printing the
// error. Refuses, before any training, a partition whose part count differs from comm.size(), a
// part whose files fail their size or CRC-32 check (every rank verifies its own part), and what
// train(ds, ...) refuses.
//
// GCN / GraphSAGE: cost per epoch: the model's kernels on the part, 2 halo exchanges per layer
// (one forward, one backward; the first layer's backward one only when it transforms first), one
// all-reduce of all weight gradients. On GPUs (config.device a GPU, one per rank) the
// communicator is an NcclCommunicator on that GPU (train/dist/nccl_communicator.hpp), and the
// part's operators, the halo exchange and the model all run there; a one-part partition needs no
// communication and trains on a LocalCommunicator. A GPU run of several ranks over a communicator
// of host buffers is refused (UnsupportedError).
//
// R-GCN: the part is renumbered type by type (RgcnPart) with one halo exchange per vertex type:
// each layer's inputs of every type get their halo rows from the owners, the halo rows'
// gradients go back to them, embedding tables live with the owners of their rows. Cost per
// epoch: the model's kernels on the part, per layer one halo exchange forward and one backward
// per vertex type the layer reads (the features' halo rows travel once, before training), one
// all-reduce of the dense weight gradients. On the CPU only; refuses (UnsupportedError) streamed
// tables and checkpoints of a model with embedding tables.
TrainSummary train(const std::string& partition_dir, dist::Communicator& comm, const ModelConfig& model,
                   const TrainConfig& config, const EpochCallback& on_epoch = {});

// The memory plan train(ds, model, config) makes and checks before anything of the model exists,
// without training: for the heterogeneous kinds (rgcn, hgt, rgat) on one process (halo-train
// --plan-only; homogeneous ones with train::plan_homogeneous, or train::plan_rank from a part's
// counts). A GPU's plan needs no GPU when config.memory_limit stands for its memory.
// InvalidArgument for another kind.
MemoryPlan plan_heterogeneous(const datasets::Dataset& ds, const ModelConfig& model, const TrainConfig& config);

}  // namespace halo::train
