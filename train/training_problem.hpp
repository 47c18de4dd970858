// TrainingProblem: what one process trains on — its rows of the features, labels and splits, the
// graph operators over them, and the ranks it shares the graph with. train(ds, ...) builds one
// for a whole dataset on one process; the distributed trainer (train/dist/distributed_trainer.hpp)
// builds one per rank from its part. The trainer loop sees only this, so it is written once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "graph/base/array.hpp"
#include "kernels/tensor.hpp"
#include "train/dist/communicator.hpp"
#include "train/dist/halo_exchange.hpp"
#include "train/memory_plan.hpp"
#include "train/models/model.hpp"

namespace halo::train {

// The whole dataset's identity and size, identical on every rank (checkpoints record it, and a
// checkpoint of any rank count resumes on any other).
struct DatasetShape {
  std::string name;
  std::int64_t num_nodes = 0;
  std::int64_t num_edges = 0;
  std::int64_t feature_dim = 0;
  std::int64_t num_classes = 0;
};

struct TrainingProblem {
  DatasetShape shape;
  const Array<float>* features = nullptr;        // this process's rows x feature_dim
  const Array<std::int64_t>* labels = nullptr;   // one per row of `features`
  kernels::IndexView train, valid, test;         // this process's rows of each split
  kernels::IndexView global_ids;                 // global id of each row (dropout keys); empty = identity
  GraphOperators* operators = nullptr;           // built for the model's kind over these rows
  dist::Communicator* comm = nullptr;            // every rank; a LocalCommunicator on one process
  dist::HaloExchange* exchange = nullptr;        // traffic and boundary sampling; null on one process
  // This process's memory plan for a model (checked before the first epoch).
  std::function<MemoryPlan(const Model&)> plan_memory;
  // The process's resident set before the arrays above were built (the plan's "process before
  // training"); -1 = train() measures it when it starts.
  std::int64_t process_bytes = -1;
};

}  // namespace halo::train
