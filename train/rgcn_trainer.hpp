// R-GCN training on a heterogeneous dataset (ACM, DBLP, ogbn-mag): an RgcnModel over all vertex
// types, trained by the same loop as GCN / GraphSAGE (runs, evaluation, early stopping, OGB's
// rule, the JSON summary) on the labelled type's split.
//
//   datasets::Dataset ds = datasets::read_dataset_dir("data/acm");
//   RgcnModelConfig model;              // 2 layers, 64 hidden, ...
//   TrainSummary s = train_rgcn(ds, model, config);
#pragma once

#include "datasets/dataset.hpp"
#include "train/rgcn_model.hpp"
#include "train/trainer.hpp"

namespace halo::train {

// One process, CPU. Types with features feed them in; types without get embedding tables updated
// sparsely after each optimiser step. Throws InvalidArgument for a homogeneous dataset, a task
// other than multiclass, a target type without labels or an empty split; UnsupportedError for
// another device, boundary sampling and feature budgets. Before the first epoch the memory plan
// (parameters, gradients, optimiser state, activations, tables) is checked like train()'s.
// Checkpoints keep the tables, their Adam moments and per-row step counts: a resumed run repeats
// an uninterrupted one's losses bitwise.
TrainSummary train_rgcn(const datasets::Dataset& ds, const RgcnModelConfig& model, const TrainConfig& config,
                        const EpochCallback& on_epoch = {});

}  // namespace halo::train
