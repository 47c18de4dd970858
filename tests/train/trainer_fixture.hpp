// Shared inputs of the trainer, checkpoint and memory-plan tests: a small learnable SBM dataset,
// short training settings (each training run takes well under a second), and the TrainingProblem
// of a whole dataset on one process.
#pragma once

#include <cstdint>

#include "datasets/synth.hpp"
#include "graph/base/random.hpp"
#include "train/models/model.hpp"
#include "train/trainer.hpp"
#include "train/training_problem.hpp"

namespace halo::test {

// 600 vertices in 3 classes, mean degree about 8, 12 features, homophily 0.9; split 60/20/20.
inline datasets::Dataset small_sbm(std::uint64_t seed = 7) {
  datasets::SbmOptions o;
  o.nodes = 600;
  o.avg_degree = 8;
  o.features = 12;
  o.classes = 3;
  o.homophily = 0.9;
  o.seed = seed;
  return datasets::generate_sbm(o);
}

// small_sbm with `tasks` binary tasks in place of its class (a multi-label dataset, as
// ogbn-proteins): task t of vertex v is 1 when v's class is t mod 3, flipped for 5 % of the
// entries, unlabelled (-1) for 10 %.
inline datasets::Dataset multilabel_sbm(std::int64_t tasks) {
  datasets::Dataset ds = small_sbm();
  datasets::NodeType& t = ds.node_types[0];
  Array<std::int64_t> y = Array<std::int64_t>::matrix(t.count, tasks);
  RandomStream rs(3, 0);
  for (std::int64_t v = 0; v < t.count; ++v)
    for (std::int64_t j = 0; j < tasks; ++j) {
      const std::uint64_t draw = rs.below(100);
      const std::int64_t truth = t.labels[v] == j % 3 ? 1 : 0;
      y[v * tasks + j] = draw < 10 ? -1 : draw < 15 ? 1 - truth : truth;
    }
  t.labels = std::move(y);
  ds.meta.task = datasets::Task::multilabel;
  ds.meta.num_tasks = tasks;
  ds.meta.num_classes = 2;
  return ds;
}

// The same graph size with `features` features (more than the 16 hidden units, so that a first
// layer transforms before it aggregates, as a streamed one must).
inline datasets::Dataset wide_sbm(std::int64_t features, std::uint64_t seed = 7) {
  datasets::SbmOptions o;
  o.nodes = 600;
  o.avg_degree = 8;
  o.features = features;
  o.classes = 3;
  o.homophily = 0.9;
  o.seed = seed;
  return datasets::generate_sbm(o);
}

// The problem train(ds, ...) builds on one process, without its operators (the caller sets
// `operators` or `build_operators`) and with the process's own bytes left out of the plan, so
// that its total does not depend on what earlier tests left in this process. `ds` and `comm`
// must outlive it.
inline train::TrainingProblem whole_dataset_problem(const datasets::Dataset& ds, train::dist::Communicator& comm) {
  train::TrainingProblem problem;
  problem.shape = {ds.meta.name, ds.graph.num_rows(), ds.graph.num_edges(), ds.target().features.cols(),
                   ds.meta.num_classes};
  problem.features = &ds.target().features;
  problem.labels = &ds.target().labels;
  problem.train = kernels::view_of(ds.split.train);
  problem.valid = kernels::view_of(ds.split.valid);
  problem.test = kernels::view_of(ds.split.test);
  problem.comm = &comm;
  problem.process_bytes = 0;
  problem.plan_memory = [&ds](const train::ModelShape& m) {
    return train::plan_training_memory(ds, m, train::OptimizerConfig{});
  };
  return problem;
}

// GCN, 2 layers, 16 hidden, dropout 0.5 everywhere (so the dropout masks matter), bias.
inline train::ModelConfig small_gcn() {
  train::ModelConfig m;
  m.kind = "gcn";
  m.layers = 2;
  m.hidden = 16;
  m.dropout = 0.5f;
  m.input_dropout = 0.5f;
  m.weight_decay = 5e-4f;
  return m;
}

// R-GCN with the defaults of its model (train/models/hetero_model.hpp's HeteroModelConfig): 2 layers of
// 64 hidden, dropout 0.5 between them and none on the inputs, 128-wide embedding tables.
inline train::ModelConfig rgcn_model() {
  train::ModelConfig m;
  m.kind = "rgcn";
  m.layers = 2;
  m.hidden = 64;
  m.dropout = 0.5f;
  m.input_dropout = 0.0f;
  m.embedding_dim = 128;
  return m;
}

// HGT as PyG's HGT example: 1 layer of 64 hidden in 2 heads, no dropout, weight decay 1e-3,
// 64-wide embedding tables.
inline train::ModelConfig hgt_model() {
  train::ModelConfig m;
  m.kind = "hgt";
  m.layers = 1;
  m.hidden = 64;
  m.heads = 2;
  m.dropout = 0.0f;
  m.input_dropout = 0.0f;
  m.weight_decay = 1e-3f;
  m.embedding_dim = 64;
  return m;
}

// Relational GAT: 2 layers, 2 heads of 16 in the hidden layer, one output head, dropout 0.5
// between the layers and 0.3 on the attention, 64-wide embedding tables.
inline train::ModelConfig rgat_model() {
  train::ModelConfig m;
  m.kind = "rgat";
  m.layers = 2;
  m.hidden = 16;
  m.heads = 2;
  m.out_heads = 1;
  m.dropout = 0.5f;
  m.input_dropout = 0.0f;
  m.attention_dropout = 0.3f;
  m.weight_decay = 5e-4f;
  m.embedding_dim = 64;
  return m;
}

// Adam, lr 0.01, `epochs` epochs, seed 3, one run.
inline train::TrainConfig short_training(int epochs) {
  train::TrainConfig c;
  c.epochs = epochs;
  c.optimizer.kind = "adam";
  c.optimizer.lr = 0.01f;
  c.seed = 3;
  return c;
}

}  // namespace halo::test
