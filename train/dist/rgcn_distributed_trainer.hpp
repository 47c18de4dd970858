// Distributed R-GCN: rank r of P opens part r of a partition of a heterogeneous dataset, renumbers
// it type by type (RgcnPart), builds one halo exchange per vertex type, and trains the RgcnModel
// one process would train on the whole graph: each layer's inputs of every type get their halo
// rows from the owners, the halo rows' gradients go back to them, embedding tables live with the
// owners of their rows, and weight gradients, losses and accuracy counts are all-reduced.
//
//   MpiSession mpi;
//   MpiCommunicator comm(mpi);
//   TrainSummary s = train_rgcn_partitioned("data/acm-p4", comm, model, config);
#pragma once

#include <string>

#include "train/dist/communicator.hpp"
#include "train/models/rgcn_model.hpp"
#include "train/trainer.hpp"

namespace halo::train::dist {

// Collective: every rank calls it with the same arguments. Refuses a partition whose part count
// differs from comm.size(), a part failing its size or CRC-32 check, a homogeneous or
// non-multiclass dataset (InvalidArgument), what train_rgcn refuses and checkpoints of a model
// with embedding tables (their rows are spread over the ranks; UnsupportedError). Every
// rank returns the same summary. Cost per epoch: the model's kernels on the part, per layer one
// halo exchange forward and one backward per vertex type the layer reads (the features' halo
// rows travel once, before training), one all-reduce of the dense weight gradients.
TrainSummary train_rgcn_partitioned(const std::string& partition_dir, Communicator& comm,
                                    const RgcnModelConfig& model, const TrainConfig& config,
                                    const EpochCallback& on_epoch = {});

}  // namespace halo::train::dist
