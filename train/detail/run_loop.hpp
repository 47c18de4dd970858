// The trainer's loop, shared by every kind of model: runs, epochs (training step, evaluation,
// early stopping, checkpoints), the loss and metrics all-reduced over ranks, and the summary's
// statistics. The GCN / GraphSAGE and the R-GCN trainers (train/detail/homogeneous_trainer.hpp,
// train/detail/hetero_problem.hpp), on one process or a rank of many, set up a
// LoopContext and a model factory, then call run_all().
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/loss.hpp"
#include "kernels/tensor.hpp"
#include "sampling/boundary_sampler.hpp"
#include "train/dist/communicator.hpp"
#include "train/dist/halo_exchange.hpp"
#include "train/features/feature_input.hpp"
#include "train/layers/parameter.hpp"
#include "train/trainable.hpp"
#include "train/trainer.hpp"

namespace halo::train::detail {

struct LoopContext {
  LoopContext(const TrainConfig& training, dist::Communicator& communicator) : config(training), comm(communicator) {}

  const TrainConfig& config;
  dist::Communicator& comm;
  dist::HaloExchange* exchange = nullptr;   // null on one process
  const std::int64_t* labels = nullptr;     // one per row the splits index (multi-label: `tasks` per row)
  // Multi-label (binary tasks per row, ogbn-proteins): labels are rows x tasks, each 0, 1 or -1
  // (unlabelled); the loss is kernels::sigmoid_bce over the labelled entries and the metric OGB's
  // ROC-AUC (train/roc_auc.hpp) in place of accuracy. 0: one class label per row.
  std::int64_t tasks = 0;
  kernels::IndexView train, valid, test;    // this process's rows of each split
  kernels::IndexView global_ids;            // dropout keys of the rows; empty = identity
  // TrainConfig::predictions_dir: each row's row in the predictions file (empty = identity), and
  // the file's rows over all ranks (the labelled type's vertices).
  kernels::IndexView prediction_ids;
  std::int64_t prediction_rows = 0;
  // global_ids built on the training device at the first step, with the view it was built from
  // (a change of global_ids builds it again), handed to the layers through Step.
  std::optional<kernels::DeviceIndex> device_global_ids;
  kernels::IndexView device_global_ids_source;
  std::int64_t train_total = 0, valid_total = 0, test_total = 0;  // over all ranks
  std::int64_t train_entries_total = 0;  // multi-label: labelled entries of the training rows, all ranks
  std::array<std::vector<std::int64_t>, 3> gathered_labels;  // multi-label on several ranks: every rank's split labels
  std::string fingerprint;                  // training_fingerprint(...), for checkpoints
  FeatureInput* input = nullptr;            // the streamed first-layer input, for its statistics; or null
  std::optional<sampling::BoundarySampler> sampler;  // set by run_all when boundary_sample_rate < 1
  FeaturePassStats streamed;                // the training steps' streaming passes, all runs
  // For a model that returns the training rows' logits only (Trainable::take_training_rows):
  // the labels of the training rows in their order, and the positions 0, 1, ... of those logits.
  std::vector<std::int64_t> training_labels;
  std::vector<std::int64_t> training_positions;
  // The splits' rows and labels prepared on the logits' device at their first loss or accuracy
  // (train, valid, test, then the training rows' own logits), kept for every later epoch and run;
  // with the labels and mask they were made from, so that a change of either remakes them.
  struct PreparedSplit {
    const std::int64_t* labels = nullptr;
    kernels::IndexView mask;
    kernels::LossRows rows;
  };
  std::array<PreparedSplit, 4> prepared;
};


// Refuses settings no model can train with (InvalidArgument naming the setting).
void check_train_config(const TrainConfig& config);

// The settings of `config` that change what training computes, as the JSON object every model's
// checkpoint fingerprint includes (optimizer, epochs, evaluation, early stopping, seed, feature
// normalisation, device); the caller adds the dataset and the model.
nlohmann::json training_settings_json(const TrainConfig& config);

// The split sizes over all ranks, checked non-empty (InvalidArgument otherwise); multi-label: the
// training rows' labelled entries too (UnsupportedError on several GPU ranks, not yet supported).
void count_splits(LoopContext& c);

// Trains config.runs runs (run r: make_model(r, seed + r)) and fills summary.runs, the accuracy
// statistics, the median epoch, the time split, every rank's traffic, the world size and the
// streamed-feature totals. `owned_vertices` is this process's row count, for the traffic table.
void run_all(LoopContext& c, const std::function<std::unique_ptr<Trainable>(int run, std::uint64_t seed)>& make_model,
             std::int64_t owned_vertices, const EpochCallback& on_epoch, TrainSummary& summary);

}  // namespace halo::train::detail
