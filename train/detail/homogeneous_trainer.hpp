// GCN and GraphSAGE behind train() (train/trainer.hpp): the problem of a whole dataset on one
// process, and the loop over any TrainingProblem (that one, or a rank's part:
// train/dist/detail/part_trainers.hpp).
#pragma once

#include "datasets/dataset.hpp"
#include "train/models/model_config.hpp"
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

}  // namespace halo::train::detail
