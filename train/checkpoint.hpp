// Checkpoints of a training run: the weights, the optimiser state and the run's records so far,
// written atomically (a checkpoint directory is either whole or absent) so that a resumed run
// continues with bitwise the losses of an uninterrupted one. No random state is saved: dropout
// masks are counter-based, keyed on (seed, epoch, layer, vertex, column).
//
// Layout of one run's checkpoint, DIR/run-NNNN/:
//   manifest.json            format, run, seed, epoch, finished, optimizer kind and steps, the
//                            configuration it belongs to, the epoch records, and every array
//                            file with its shape, size and CRC-32
//   manifest.crc32           the CRC-32 of manifest.json's bytes (8 hex digits), so that an edited
//                            or damaged manifest is refused
//   params/<name>.npy        each parameter's value (float32, rows x cols)
//   buffers/<name>.npy       each non-trainable model tensor (batch-norm running statistics,
//                            embedding tables and their sparse Adam moments)
//   counters/<name>.npy      each integer array of model state (int64, one dimension: an
//                            embedding table's per-row step counts)
//   optimizer/<name>.npy     each optimiser state tensor ("conv0.weight.adam_m", ...)
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/array.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/parameter.hpp"
#include "train/optimizer.hpp"
#include "train/run_tracker.hpp"

namespace halo::train {

// What a checkpoint holds besides tensors.
struct CheckpointState {
  int run = 0;
  std::uint64_t seed = 0;
  int epoch = 0;          // the last completed epoch (1-based)
  bool finished = false;  // the run is over (all epochs done or stopped early)
  // JSON text naming the model, optimiser and training settings the checkpoint belongs to; a
  // resume must present the same.
  std::string config;
  // Every epoch of the run so far. The early-stopping state and the best-so-far are replayed from
  // them (RunTracker), so they need no separate format.
  std::vector<EpochRecord> records;
};

// DIR/run-NNNN (four digits at least).
std::string checkpoint_path(const std::string& dir, int run);

// True when DIR/run-NNNN/manifest.json exists, after recovering a checkpoint whose replacement was
// interrupted (datasets::recover_interrupted_output: the previous checkpoint is restored, with a
// warning) and removing the temporaries of processes that died while writing one.
bool checkpoint_exists(const std::string& dir, int run);

// A model's tensors as a checkpoint sees them: its parameters (Model::parameters(),
// Trainable::parameters()), its other state (buffers()) and its integer state (counters()).
struct CheckpointTensors {
  std::vector<Parameter*> parameters;
  std::vector<std::pair<std::string, kernels::Tensor*>> buffers;
  std::vector<std::pair<std::string, Array<std::int64_t>*>> counters;
};

// Writes the run's checkpoint of a model's tensors and `optimizer`, replacing the previous one atomically
// (AtomicDirectory with force: the old checkpoint stays until the new one is complete). Creates
// `dir` if needed. Tensor names must be usable as file names ([A-Za-z0-9._-]). Cost: the bytes
// of parameters, buffers, counters and optimiser state, plus one fsync per file.
void save_checkpoint(const std::string& dir, const CheckpointState& state, const CheckpointTensors& model, Optimizer& optimizer);

// Reads DIR/run-NNNN back into `model` (parameters, buffers, counters) and `optimizer` (its state,
// created first where missing, and its step count). Throws IoError naming the file for a
// missing, malformed or corrupted (size or CRC-32 mismatch, of an array or of the manifest itself)
// checkpoint, or one whose epoch records are not epochs 1..epoch, and InvalidArgument when
// the checkpoint belongs to another configuration (`expected_config` differs: the message names
// the first differing key), another optimiser, or a model whose tensors differ in name or shape.
CheckpointState load_checkpoint(const std::string& dir, int run, const std::string& expected_config, const CheckpointTensors& model,
                                Optimizer& optimizer);

}  // namespace halo::train
