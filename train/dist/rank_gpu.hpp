// Which GPU each rank of a distributed run drives (one rank per GPU, taken in turn on each
// machine), and the check, agreed by every rank, that each can drive its GPU over NCCL: a world
// in which some rank cannot then fails on every rank at once instead of leaving the others
// waiting in a collective. Plain C++, compiled in every build (without CUDA or NCCL the check
// fails, on every rank, saying so).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/device.hpp"
#include "train/dist/communicator.hpp"

namespace halo::train::dist {

// The index of `rank` among the ranks of its machine: how many lower ranks share its host key
// (host_keys[q] identifies rank q's machine). O(rank).
int local_rank_of(const std::vector<std::int64_t>& host_keys, int rank);

// A key of this machine: a hash of its host name.
std::int64_t host_key();

// This process's local rank in `world`: the ranks with the same host key, numbered in rank order
// (the grouping MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) makes, for any launcher). Collective:
// one all-reduce of size() int64 over `world`, which must take host buffers.
int local_rank(Communicator& world);

// The visible GPU (CUDA_VISIBLE_DEVICES numbering) that local rank `local_rank` drives:
// local_rank % visible_gpus, so a machine's ranks take its GPUs in turn (more ranks than GPUs
// then share one, which NCCL refuses when it starts). 0 when no GPU is visible (the device check
// then says so). InvalidArgument for a negative local rank.
int gpu_of_local_rank(int local_rank, int visible_gpus);

// Checks on every rank that this build has NCCL and that `device` is a GPU this process can use,
// then agrees over `world`: when any rank failed, every rank throws — a failed rank its own error
// (UnsupportedError: no NCCL, no CUDA, no such GPU), the others an UnsupportedError naming the
// ranks that failed. Collective: one all-reduce of size() int64 over `world` (host buffers).
void require_nccl_device(Communicator& world, const kernels::Device& device);

}  // namespace halo::train::dist
