// R-GCN behind train() (train/trainer.hpp): what the R-GCN trainer needs from the process it runs
// in, one process (train_hetero) or one rank of many (dist::detail::train_hetero_part): the graph
// side, the inputs, the labelled rows and the communicator, so both share one training routine.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "kernels/tensor.hpp"
#include "train/dist/communicator.hpp"
#include "train/features/feature_source.hpp"
#include "train/layers/rgcn_conv.hpp"
#include "train/models/hetero_model.hpp"
#include "train/trainer.hpp"

namespace halo::train::detail {

struct HeteroProblem {
  // The whole dataset, for the checkpoint fingerprint.
  std::string name;
  std::int64_t num_nodes = 0;
  std::int64_t num_edges = 0;
  std::string target_type;
  std::int64_t num_classes = 0;

  const RgcnGraph* graph = nullptr;
  std::vector<std::int64_t> feature_widths;    // per type: its features' width, or 0 (a table)
  std::string feature_dtype = "f32";           // how the features are stored: f32, f16 or bf16
  // Per type: its features are stored in bfloat16 and may stay so (HeteroModelLayout::keeps_bf16
  // decides); empty: every type's features are widened to float32.
  std::vector<char> bf16_features;
  std::vector<char> halo_types;                // per type on a rank: it has halo rows; empty on one process
  int target = 0;                              // type index of the labelled type
  const std::int64_t* labels = nullptr;        // per output row of the target type
  kernels::IndexView train, valid, test;       // output rows of the target type
  // Each output row of the target type's index among all vertices of that type (empty: the
  // identity, on one process), and their count: where TrainConfig::predictions_dir puts its rows.
  kernels::IndexView target_ids;
  std::int64_t target_count = 0;
  dist::Communicator* comm = nullptr;
  std::int64_t graph_entries = 0;              // this process's relation entries, for the memory plan
  std::int64_t process_bytes = 0;              // resident before training
  // Called once the memory plan has passed, before the model is built: places the features on
  // the training device (on a rank with their halo rows, through the exchanges it builds) and
  // sets `features` (and `halo`), so that nothing the plan counts exists before it is checked.
  // The types the model's layout keeps in bfloat16 (keeps_bf16) go into `features_bf16` instead.
  std::function<void(HeteroProblem&, const HeteroModelLayout&)> build_inputs;
  std::vector<const kernels::Tensor*> features;  // per type: its input rows, or null (a table)
  std::vector<const kernels::Bf16Rows*> features_bf16;  // per type (or empty): its rows kept in bfloat16
  const HeteroHaloRows* halo = nullptr;            // null on one process
};

// A vertex type's features as read for training: float32, or 16 bits widened as they are read
// (copied once into the float32 tensor the model reads, FeatureSource::copy_to). `type` must have
// features and outlive the source.
FeatureSource node_type_features(const datasets::NodeType& type);

// Checks the memory plan, then trains config.runs runs of an HeteroModel on `problem` with the
// trainer loop. Collective when problem.comm has several ranks.
TrainSummary train_hetero_problem(HeteroProblem& problem, const HeteroModelConfig& model, const TrainConfig& config,
                                const EpochCallback& on_epoch);

// train() of a heterogeneous dataset (model kind rgcn) on one process.
TrainSummary train_hetero(const datasets::Dataset& ds, const HeteroModelConfig& model, const TrainConfig& config,
                        const EpochCallback& on_epoch = {});

// The memory plan train_hetero(ds, model, config) would check, without training or touching a GPU
// (a GPU's table streaming decided from config.memory_limit when it is set).
MemoryPlan plan_hetero(const datasets::Dataset& ds, const HeteroModelConfig& model, const TrainConfig& config);

// Refuses settings distributed R-GCN training does not support (UnsupportedError naming them): a
// GPU, boundary sampling, feature streaming.
void check_hetero_settings(const TrainConfig& config);

}  // namespace halo::train::detail
