// GCN and GraphSAGE behind train() (train/trainer.hpp): the problem of a whole dataset on one
// process, and the loop over any TrainingProblem (that one, or a rank's part:
// train/dist/detail/part_trainers.hpp).
#pragma once

#include "datasets/dataset.hpp"
#include "train/models/model_config.hpp"
#include "train/rank_plan.hpp"
#include "train/trainer.hpp"
#include "train/training_problem.hpp"

namespace halo::train::detail {

// train() of a homogeneous dataset (model.kind gcn or sage) on one process.
TrainSummary train_homogeneous(const datasets::Dataset& ds, const ModelConfig& model, const TrainConfig& config,
                               const EpochCallback& on_epoch = {});

// Trains on what `problem` holds, as train() says. Collective when problem.comm has several
// ranks: every rank calls it with the same settings, and every rank gets the same summary
// (metrics are all-reduced).
TrainSummary train_homogeneous_problem(TrainingProblem& problem, const ModelConfig& model, const TrainConfig& config,
                                       const EpochCallback& on_epoch = {});

// The plan train_homogeneous makes and checks before it allocates anything, with `memory_bytes` of
// memory (the GPU's on a GPU: none is needed to plan) and the process's resident set as
// "process before training" on the CPU; fits as it would pass (config.memory_limit too).
RankPlan plan_homogeneous(const datasets::Dataset& ds, const ModelConfig& model, const TrainConfig& config,
                          std::int64_t memory_bytes);

}  // namespace halo::train::detail
