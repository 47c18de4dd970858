// halo-train's settings: the command-line flags (ARCHITECTURE.md's halo-train contract), the
// JSON --config file whose keys are the long flag names (flags on the command line win), and
// their translation into the trainer's ModelConfig and TrainConfig.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "train/dist/communicator.hpp"
#include "train/models/model_config.hpp"
#include "train/trainer.hpp"

namespace CLI {
class App;
}

namespace halo::tools {

struct TrainOptions {
  std::string dataset;
  std::string partitions;
  train::ModelConfig model;
  bool add_reverse_relations = false;  // heterogeneous --dataset: add every relation's reverse first
  train::TrainConfig train;
  std::string early_stopping_metric = "valid_loss";
  std::string device = "cpu";
  std::string memory_limit;  // "8G", "512M", bytes; empty = none
  std::string feature_memory_budget;  // the same forms; empty = the memory plan decides
  std::string json;
  std::string tensorboard;  // folder of TensorBoard event files (one sub-folder per run); empty = none
  double collective_timeout_s = train::dist::default_collective_timeout_s;  // --partitions under mpirun
  bool quiet = false;
  bool verbose = false;
  // --plan-only (tools/halo_train/plan_only.hpp): every rank's plan, nothing trained.
  bool plan_only = false;
  int world_size = 0;            // ranks to plan for with --dataset (partitioned in memory)
  std::string device_memory;     // each rank's memory; empty = this machine's available host memory
  double plan_scale = 1.0;       // multiply every part's counts (a larger graph of the same shape)
  std::string plan_partitioner = "metis";
};

// Registers every flag on `app`, bound to `options`, and --config with the JSON reader.
void add_train_options(CLI::App& app, TrainOptions& options);

// Turns the parsed text settings (device, memory limit, feature budget, stopping metric) into the
// configs and rejects what this build cannot do (--partitions) and settings that contradict each
// other; throws InvalidArgument / UnsupportedError.
void finish_train_options(TrainOptions& options);

// Every effective setting, typed, under the long flag names (for the JSON summary).
nlohmann::json describe_settings(const TrainOptions& options);

}  // namespace halo::tools
