// R-GCN training on a heterogeneous dataset (ACM, DBLP, ogbn-mag): an RgcnModel over all vertex
// types, trained by the same loop as GCN / GraphSAGE (runs, evaluation, early stopping, OGB's
// rule, the JSON summary) on the labelled type's split.
//
//   datasets::Dataset ds = datasets::read_dataset_dir("data/acm");
//   RgcnModelConfig model;              // 2 layers, 64 hidden, ...
//   TrainSummary s = train_rgcn(ds, model, config);
#pragma once

#include "datasets/dataset.hpp"
#include "train/models/rgcn_model.hpp"
#include "train/trainer.hpp"

namespace halo::train {

// One process, on the CPU or on one GPU (config.device). Types with features feed them in; types
// without get embedding tables updated sparsely after each optimiser step. On a GPU everything an
// epoch touches lives there (features, tables and their sparse Adam, the layers' relation
// matrices, uploaded once), and an epoch reads back only what train()'s GPU epoch does: the
// loss, the accuracies and the validation loss's L2 term — unless the tables are streamed:
// config.feature_memory_budget > 0 (on any device), or on a GPU tables that would take more than
// half of the GPU memory the features leave, stay in host memory with their sparse Adam and
// stream through the first layer (RgcnModelConfig::table_stream_budget; the budget given, or a
// sixteenth of the GPU's memory). In training only the training rows' logits are computed
// (RgcnModel::set_training_rows). Throws InvalidArgument for a homogeneous dataset, a task other
// than multiclass, a target type without labels or an empty split; UnsupportedError for boundary
// sampling and a precomputed first aggregation, and for a GPU that this build or machine does
// not have. Before the first epoch the memory plan (parameters,
// gradients, optimiser state, activations, tables; on a GPU of the GPU's memory) is checked
// like train()'s. Checkpoints keep the tables, their Adam moments and per-row step counts: a
// resumed run repeats an uninterrupted one's losses bitwise.
TrainSummary train_rgcn(const datasets::Dataset& ds, const RgcnModelConfig& model, const TrainConfig& config,
                        const EpochCallback& on_epoch = {});

}  // namespace halo::train
