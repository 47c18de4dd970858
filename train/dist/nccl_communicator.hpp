// NcclCommunicator: the Communicator between the GPUs of a distributed run, one rank per GPU, over
// NCCL. MPI (or any host communicator) only bootstraps it; the halo rows then travel between GPUs
// without a host round trip. nccl.h stays out of this header, so code that includes it needs no
// NCCL flags; without NCCL in the build (HALO_WITH_NCCL off) every member throws
// UnsupportedError.
//
//   MpiSession mpi;
//   MpiCommunicator world(mpi);
//   const int gpu = gpu_of_local_rank(local_rank(world), kernels::cuda_device_count());  // rank_gpu.hpp
//   NcclCommunicator comm(world, kernels::Device::cuda(gpu));
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/device.hpp"
#include "train/dist/communicator.hpp"

namespace halo::train::dist {

// True when this build has the NCCL communicator (HALO_WITH_NCCL).
bool nccl_available();
// Throws UnsupportedError, saying how to get one, when this build has no NCCL.
void require_nccl();

// Buffers: memory of the communicator's GPU is handed to NCCL as it is; host memory is accepted
// too and staged through device memory (two extra copies), because the trainer's loop reduces
// host vectors (loss sums, correct counts, gradients gathered on the host).
//
// Ordering: each collective first waits for the work halo has queued on the GPU (the kernels that
// produced the buffers), runs on the communicator's own stream, and returns once it has completed
// there, so the interface is blocking, as MpiCommunicator's is. The exception is a started
// all-to-all-v (start_all_to_all_v), which never waits on the host for device buffers: its
// transfer is queued on the communicator's stream behind an event recorded on halo's stream (so
// it reads what the kernels queued before it wrote), and its finish() makes halo's stream wait
// for an event recorded after the transfer. Kernels queued between the two run on halo's stream
// while the rows travel, and those queued after finish() see them. With a host buffer, finish()
// also waits on the host (and start may, for the pageable copies).
//
// Determinism: all_reduce is ncclAllReduce with ncclSum; NCCL picks its algorithm from the world,
// the message size and the topology only, so a run repeats its sums bit for bit on the same
// machines and settings. all_to_all_v moves bytes and is exact.
class NcclCommunicator : public Communicator {
 public:
  // Joins bootstrap's ranks into an NCCL world on GPU `device`: require_nccl_device(bootstrap,
  // device) (so a rank that cannot fails every rank), then rank 0 creates the NCCL unique id
  // (ncclGetUniqueId) and broadcasts it over `bootstrap`, then every rank calls ncclCommInitRank
  // with the bootstrap's rank and size. `bootstrap` is a host communicator (MpiCommunicator, or
  // LocalCommunicator for one rank) and is used only here. Makes `device` the calling thread's
  // current GPU for good (one rank drives one GPU). Collective over bootstrap. Throws
  // UnsupportedError (no NCCL, the GPU is unusable), CommError (NCCL failed), CudaError.
  NcclCommunicator(Communicator& bootstrap, kernels::Device device);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override;
  int size() const override;
  // The GPU this rank drives.
  kernels::Device device() const override;
  // ncclAllReduce (sum), in place.
  void all_reduce(void* data, std::int64_t count, DataType type) override;
  // One ncclSend and one ncclRecv per peer with a non-empty message, grouped (ncclGroupStart /
  // ncclGroupEnd) so every pair proceeds at once; the message to itself is a device copy.
  void all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                    const std::vector<std::int64_t>& recv_counts, DataType type) override;
  // The same, queued on the communicator's stream; see Ordering above.
  std::unique_ptr<PendingAllToAll> start_all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts,
                                                      void* recv, const std::vector<std::int64_t>& recv_counts,
                                                      DataType type) override;
  // ncclBroadcast, in place.
  void broadcast(void* data, std::int64_t count, DataType type, int root) override;
  // A one-element all-reduce, waited for.
  void barrier() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace halo::train::dist
