// The distributed trainer: rank r of P opens part r of a partition directory (and nothing else),
// builds its halo exchange and its rows of the graph operators, and runs the trainer loop with the
// weight gradients, batch-norm statistics, loss and accuracy counts all-reduced, so P ranks train
// the model one process would train on the whole graph.
//
//   MpiSession mpi;                 // once per process
//   MpiCommunicator comm(mpi);
//   TrainSummary s = train_partitioned("data/cora-p4", comm, model, config);
//
// On GPUs (config.device a GPU, one per rank) the communicator is an NcclCommunicator on that GPU
// (train/dist/nccl_communicator.hpp), and the part's operators, the halo exchange and the model
// all run there; a one-part partition needs no communication and trains on a LocalCommunicator.
//
// Collective: every rank calls it with the same arguments. A rank that throws leaves its peers
// waiting in a collective: the caller must then end the world (MpiSession::abort), as halo-train
// does after printing the error.
#pragma once

#include <string>

#include "train/dist/communicator.hpp"
#include "train/models/model.hpp"
#include "train/trainer.hpp"

namespace halo::train::dist {

// Refuses, before any training, a partition whose part count differs from comm.size(), a part
// whose files fail their size or CRC-32 check (every rank verifies its own part), datasets the
// trainer cannot train on (heterogeneous, not multiclass, no features or labels), and a GPU run
// of several ranks over a communicator of host buffers (train()'s check). Then trains as
// train() does; every rank returns the same summary. Cost per epoch: the model's kernels on the
// part, 2 halo exchanges per layer (one forward, one backward; the first layer's backward one only
// when it transforms first), one all-reduce of all weight gradients.
TrainSummary train_partitioned(const std::string& partition_dir, Communicator& comm, const ModelConfig& model,
                               const TrainConfig& config, const EpochCallback& on_epoch = {});

}  // namespace halo::train::dist
