// The all-reduce of a training step's weight gradients over the ranks (train/detail/run_loop
// calls it after every backward pass of a distributed run).
#pragma once

#include <vector>

#include "train/dist/communicator.hpp"
#include "train/layers/parameter.hpp"

namespace halo::train::detail {

// Σ over the ranks of every parameter's gradient, in place, in one message. When the
// communicator moves buffers of the GPU that holds every gradient (NCCL), the gradients are
// packed into one buffer there, reduced in place and unpacked on the GPU; otherwise (host
// communicators) through one host vector. Collective; deterministic as comm.all_reduce is.
void all_reduce_gradients(dist::Communicator& comm, const std::vector<Parameter*>& parameters);

}  // namespace halo::train::detail
