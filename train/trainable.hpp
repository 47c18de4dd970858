// Trainable: what the trainer loop drives — a model bound to its inputs (a GCN / GraphSAGE Model
// with its features, or an R-GCN model over a heterogeneous graph), seen only through its
// forward and backward passes, its parameters and the state a checkpoint keeps.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernels/tensor.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/step.hpp"
#include "train/optimizer.hpp"

namespace halo::train {

class Trainable {
 public:
  virtual ~Trainable() = default;
  // Logits of the labelled vertices this process holds, one row per row the split indexes.
  virtual kernels::Tensor forward(const Step& step) = 0;
  // Accumulates the parameters' gradients from d loss / d logits of the last training forward.
  virtual void backward(kernels::Tensor grad_logits, const Step& step) = 0;
  // The dense parameters: the optimiser steps them, distributed runs all-reduce their gradients.
  virtual std::vector<Parameter*> parameters() = 0;
  // State a checkpoint keeps beyond the parameters and the optimiser's state.
  virtual std::vector<std::pair<std::string, kernels::Tensor*>> buffers() = 0;
  // Integer state a checkpoint keeps (an embedding table's per-row step counts); none by default.
  virtual std::vector<std::pair<std::string, Array<std::int64_t>*>> counters() { return {}; }
  virtual void zero_grad() = 0;
  // Offers the rows the training loss reads (this process's training rows, as the logits of
  // forward index them). A model that takes the offer returns true and from then on returns, from
  // a training forward, their logits only (row k for rows[k]; an evaluation forward still returns
  // every row), saving the work of the others; the default declines.
  virtual bool take_training_rows(kernels::IndexView /*rows*/) { return false; }
  // Updates the model makes itself after the optimiser's step (sparse embedding rows); none by
  // default.
  virtual void after_step(const OptimizerConfig& /*optimizer*/) {}
};

}  // namespace halo::train
