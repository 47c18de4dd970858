// The dataset of halo-train --dataset as training (and --plan-only) reads it: its folder checked,
// every array verified, 16-bit features kept as stored, the reverse relations added when asked.
#pragma once

#include "datasets/dataset.hpp"
#include "tools/halo_train/options.hpp"

namespace halo::tools {

// Reads options.dataset; InvalidArgument for --add-reverse-relations on a homogeneous dataset.
datasets::Dataset read_training_dataset(const TrainOptions& options);

}  // namespace halo::tools
