// The GPU of each rank and the agreed NCCL device check.
#include "train/dist/rank_gpu.hpp"

#include <unistd.h>

#include <exception>
#include <functional>
#include <string>

#include "graph/base/error.hpp"
#include "train/dist/nccl_communicator.hpp"

namespace halo::train::dist {

int local_rank_of(const std::vector<std::int64_t>& host_keys, int rank) {
  HALO_EXPECTS(rank >= 0 && static_cast<std::size_t>(rank) < host_keys.size(),
               "rank " + std::to_string(rank) + " is not one of the " + std::to_string(host_keys.size()) + " ranks");
  const std::int64_t mine = host_keys[static_cast<std::size_t>(rank)];
  int local = 0;
  for (int q = 0; q < rank; ++q) local += host_keys[static_cast<std::size_t>(q)] == mine ? 1 : 0;
  return local;
}

std::int64_t host_key() {
  // POSIX host names are at most 255 bytes; a longer one is truncated, which only merges keys.
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) throw CommError("gethostname failed: cannot tell this machine apart");
  return static_cast<std::int64_t>(std::hash<std::string>{}(std::string(name)));
}

int local_rank(Communicator& world) {
  return local_rank_of(all_gather_value(world, host_key()), world.rank());
}

int gpu_of_local_rank(int local_rank, int visible_gpus) {
  HALO_EXPECTS(local_rank >= 0, "the local rank must be >= 0, got " + std::to_string(local_rank));
  return visible_gpus > 0 ? local_rank % visible_gpus : 0;
}

void require_nccl_device(Communicator& world, const kernels::Device& device) {
  std::exception_ptr failure;
  try {
    require_nccl();
    HALO_EXPECTS(device.is_cuda(), "the NCCL communicator moves GPU buffers; got device " + device.to_string());
    kernels::require_device(device);
  } catch (...) {
    failure = std::current_exception();
  }
  const std::vector<std::int64_t> failed = all_gather_value<std::int64_t>(world, failure ? 1 : 0);
  if (failure) std::rethrow_exception(failure);
  std::string ranks;
  for (std::size_t q = 0; q < failed.size(); ++q)
    if (failed[q] != 0) ranks += (ranks.empty() ? "" : ", ") + std::to_string(q);
  if (!ranks.empty())
    throw UnsupportedError("rank(s) " + ranks + " cannot drive their GPU over NCCL (see their messages); rank " +
                           std::to_string(world.rank()) + " stops with them");
}

}  // namespace halo::train::dist
