// MpiCommunicator: the Communicator over MPI with host buffers, and MpiSession, the process's
// MPI lifetime (init, finalize, and the abort that ends every rank when one fails). mpi.h stays
// out of this header, so code that includes it needs no MPI flags.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "train/dist/communicator.hpp"

namespace halo::train::dist {

// True when this build has the MPI communicator (HALO_WITH_MPI).
bool mpi_available();

// True when the process was started by an MPI launcher (mpirun / mpiexec / srun set their rank
// variables), so joining the MPI world will find peers rather than a singleton.
bool launched_by_mpi();

// MPI_Init_thread (funneled: only the thread that created the session communicates) for the
// lifetime of the object, MPI_Finalize after. One per process. Throws UnsupportedError when the
// build has no MPI, CommError when MPI fails to start.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int world_rank() const;
  int world_size() const;
  // Ends every rank of the world now with exit code `code` (MPI_Abort): what a rank does after it
  // reported its own error, so its peers do not wait for it forever.
  [[noreturn]] void abort(int code) const;
};

// A communicator over a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN, so a failing call
// throws CommError (with MPI's message) instead of killing the process silently. Messages larger
// than MPI's int counts are sent in pieces. Every wait polls (sleeping between polls) and gives up
// with CommError after `collective_timeout_s` without completion: "no progress in a collective
// (...) for N s". all_reduce is MPI_Iallreduce (deterministic for a fixed world size
// with Open MPI's default reduction algorithms), broadcast MPI_Ibcast, barrier MPI_Ibarrier;
// start_all_to_all_v posts one
// non-blocking receive and send per peer with a non-empty message (and copies the message to
// itself), and its finish() waits for them all (MPI_Waitall); all_to_all_v is the two in a row.
// Messages move while the ranks are inside MPI calls (no progress thread), so the overlap a
// started exchange buys depends on the transport.
class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(const MpiSession& session, double collective_timeout_s = default_collective_timeout_s);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override;
  int size() const override;
  kernels::Device device() const override { return kernels::Device::cpu(); }
  void all_reduce(void* data, std::int64_t count, DataType type) override;
  void all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                    const std::vector<std::int64_t>& recv_counts, DataType type) override;
  std::unique_ptr<PendingAllToAll> start_all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts,
                                                      void* recv, const std::vector<std::int64_t>& recv_counts,
                                                      DataType type) override;
  void broadcast(void* data, std::int64_t count, DataType type, int root) override;
  void barrier() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace halo::train::dist
