// train(partition_dir, comm, ...) (train/trainer.hpp) per model family: rank comm.rank() opens its
// part and trains on it, GCN / GraphSAGE (homogeneous_part_trainer.cpp) or R-GCN
// (hetero_part_trainer.cpp). Collective: every rank calls it with the same arguments.
#pragma once

#include <string>

#include "partition/partition_dir.hpp"
#include "train/dist/communicator.hpp"
#include "train/models/model_config.hpp"
#include "train/models/hetero_model.hpp"
#include "train/trainer.hpp"

namespace halo::train::dist::detail {

// This rank's part of the partition `info` describes, its files checked against their sizes and
// structure (and their CRC-32s when `verify_checksums`); refuses (InvalidArgument, with the mpirun
// line to use) a partition whose part count is not the number of ranks running. Features stored in
// 16 bits stay so (the trainers stream them, or widen them as they copy them).
partition::Part read_rank_part(const std::string& partition_dir, const partition::PartitionDirInfo& info,
                               const Communicator& comm, bool verify_checksums);

// A partition of a homogeneous dataset (model kind gcn or sage).
TrainSummary train_homogeneous_part(const std::string& partition_dir, Communicator& comm, const ModelConfig& model,
                                    const TrainConfig& config, const EpochCallback& on_epoch);

// A partition of a heterogeneous dataset (model kind rgcn).
TrainSummary train_hetero_part(const std::string& partition_dir, Communicator& comm, const HeteroModelConfig& model,
                             const TrainConfig& config, const EpochCallback& on_epoch);

}  // namespace halo::train::dist::detail
