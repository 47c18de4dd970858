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
// Ordering: every collective runs on the communicator's own stream, behind an event recorded on
// halo's stream (so it reads what the kernels queued before it wrote), and halo's stream waits,
// on the GPU, for an event recorded after it (so the kernels queued next read its result, and
// frees in halo's stream order never recycle memory under NCCL). Stream-ordered, the host not
// waiting: all_reduce, broadcast and all_to_all_v on device buffers, and a started
// all-to-all-v's finish() on device buffers (its transfer overlaps the kernels queued between
// start and finish). Waited for on the host: a collective on a host buffer (the caller reads it
// on return), barrier() (a host rendezvous, after all work queued before it on the GPU), a
// finish() with a host buffer, and growing the staging memory. A started all-to-all-v receiving
// into a host buffer also waits in start (the copy back to pageable memory would block anyway).
//
// Waiting: the communicator's own waits never block inside CUDA or NCCL; they poll the stream or
// event (cudaStreamQuery, cudaEventQuery) and NCCL's asynchronous error (ncclCommGetAsyncError),
// sleeping 10 us to 1 ms between polls. When the collective has not ended within the collective
// timeout (a peer died or stopped calling collectives), or NCCL reports an error, the
// communicator is aborted (ncclCommAbort) and CommError names the collective, the rank and the
// seconds waited; every later call then throws CommError. The destructor gives queued
// collectives the timeout, then aborts.
//
// Watchdog: the host also waits for halo's stream where no collective is in sight (a download of
// a step's loss, a synchronisation, a staging copy of the feature pipeline), and a stream-ordered
// collective that never ends holds those waits for ever. A thread of the communicator polls every
// collective it has queued (events before and after it on the communicator's stream, every 0.1 s
// or a quarter of the timeout): one that has been able to run for longer than the collective
// timeout without finishing (train/dist/detail/collective_watch.hpp), or an error NCCL reports,
// makes it abort the communicator (its kernels stop, so the waits behind them end) and log why;
// the calling thread's next wait or call throws CommError ("the communicator was aborted by its
// watchdog: ..."). What such a wait read from the GPU in between is not to be trusted: halo's
// trainer ends every step and evaluation with a waited all-reduce of the loss, which throws. Not
// covered: NCCL sets up its connections to the peers on the host at their first collective
// (ncclCommInitRank in the constructor, and each kind's first use), with its own waits, during
// which the watchdog cannot abort (it says so); and ncclCommAbort from another thread is known to
// hang at times before NCCL 2.19.
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
  // current GPU for good (one rank drives one GPU). `collective_timeout_s` (> 0): how long a wait
  // of the host for a collective may last. Collective over bootstrap. Throws InvalidArgument (a
  // timeout <= 0), UnsupportedError (no NCCL, the GPU is unusable), CommError (NCCL failed),
  // CudaError.
  NcclCommunicator(Communicator& bootstrap, kernels::Device device,
                   double collective_timeout_s = default_collective_timeout_s);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override;
  int size() const override;
  // The GPU this rank drives.
  kernels::Device device() const override;
  // ncclAllReduce (sum), in place; stream-ordered for a device buffer, waited for on a host one.
  void all_reduce(void* data, std::int64_t count, DataType type) override;
  // One ncclSend and one ncclRecv per peer with a non-empty message, grouped (ncclGroupStart /
  // ncclGroupEnd) so every pair proceeds at once; the message to itself is a device copy.
  void all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                    const std::vector<std::int64_t>& recv_counts, DataType type) override;
  // The same, queued on the communicator's stream; see Ordering above. all_to_all_v is this
  // followed by finish().
  std::unique_ptr<PendingAllToAll> start_all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts,
                                                      void* recv, const std::vector<std::int64_t>& recv_counts,
                                                      DataType type) override;
  // ncclBroadcast, in place; stream-ordered for a device buffer, waited for on a host one.
  void broadcast(void* data, std::int64_t count, DataType type, int root) override;
  // A one-element all-reduce, waited for on the host, after all work queued on the GPU before it.
  void barrier() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace halo::train::dist
