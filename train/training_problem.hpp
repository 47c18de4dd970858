// TrainingProblem: what one process trains a GCN / GraphSAGE model on — its rows of the features,
// labels and splits, the graph operators over them, and the ranks it shares the graph with.
// train(ds, ...) builds one for a whole dataset on one process, train(partition_dir, comm, ...)
// one per rank from its part (train/dist/homogeneous_part_trainer.cpp). The loop
// (train/detail/homogeneous_trainer.hpp) sees only this, so it is written once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "datasets/half_features.hpp"
#include "graph/base/array.hpp"
#include "kernels/tensor.hpp"
#include "train/dist/communicator.hpp"
#include "train/dist/halo_exchange.hpp"
#include "train/memory_plan.hpp"
#include "train/models/model.hpp"
#include "train/trainer.hpp"

namespace halo::train {

// The whole dataset's identity and size, identical on every rank (checkpoints record it, and a
// checkpoint of any rank count resumes on any other).
struct DatasetShape {
  std::string name;
  std::int64_t num_nodes = 0;
  std::int64_t num_edges = 0;
  std::int64_t feature_dim = 0;
  std::int64_t num_classes = 0;  // the logits' width: classes, or the binary tasks of a multi-label task
};

struct TrainingProblem {
  DatasetShape shape;
  const Array<float>* features = nullptr;        // this process's rows x feature_dim
  const datasets::HalfFeatures* half_features = nullptr;  // instead of `features`: those rows stored in 16 bits
  const Array<std::int64_t>* labels = nullptr;   // one per row of `features` (multi-label: `tasks` per row)
  std::int64_t tasks = 0;                        // multi-label: binary tasks per row (0, 1, -1); 0 = multiclass
  kernels::IndexView train, valid, test;         // this process's rows of each split
  kernels::IndexView global_ids;                 // global id of each row (dropout keys); empty = identity
  GraphOperators* operators = nullptr;           // built for the model's kind over these rows
  dist::Communicator* comm = nullptr;            // every rank; a LocalCommunicator on one process
  dist::HaloExchange* exchange = nullptr;        // traffic and boundary sampling; null on one process
  // This process's memory plan for a model of the given shape, made before the model exists.
  std::function<MemoryPlan(const ModelShape&)> plan_memory;
  // When set, called once the memory plan has passed and before the model is built: builds the
  // operators (and, on a rank, the halo exchange) and sets `operators` (and `exchange`), so that
  // nothing the plan counts is allocated before the plan is checked.
  std::function<void(TrainingProblem&)> build_operators;
  // The plan's "process before training": -1 = the process's resident set when train() starts,
  // less its mapped arrays (process_bytes_besides_arrays; a test pins it to compare plans).
  std::int64_t process_bytes = -1;
};

// The JSON text (keys sorted) of every setting that changes what training a GCN / GraphSAGE model
// computes; checkpoints record it and a resume must match it. Excludes runs, threads,
// checkpointing and the limit.
std::string training_fingerprint(const DatasetShape& shape, const ModelConfig& model, const TrainConfig& config);
std::string training_fingerprint(const datasets::Dataset& ds, const ModelConfig& model, const TrainConfig& config);

}  // namespace halo::train
