// Shared inputs of the trainer, checkpoint and memory-plan tests: a small learnable SBM dataset
// and short training settings, so each training run takes well under a second.
#pragma once

#include <cstdint>

#include "datasets/synth.hpp"
#include "train/models/model.hpp"
#include "train/trainer.hpp"

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

// R-GCN with the defaults of its model (train/models/rgcn_model.hpp's RgcnModelConfig): 2 layers of
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
