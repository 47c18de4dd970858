// Communicator: the collectives a distributed run needs (all-reduce, all-to-all-v, broadcast,
// barrier) behind one interface, so the halo exchange, the gradient all-reduce and the trainer are
// written once. LocalCommunicator is the single-rank one (no MPI); MpiCommunicator moves host
// buffers over MPI; NcclCommunicator (train/dist/nccl_communicator.hpp) moves GPU buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/device.hpp"

namespace halo::train::dist {

// How long a rank waits for a collective that makes no progress before it gives up on the world
// (a peer stopped, died or is swapped out): halo-train's --collective-timeout. MpiCommunicator and
// NcclCommunicator then throw CommError, and the program ends every rank.
constexpr double default_collective_timeout_s = 600.0;

enum class DataType { float32, float64, int64 };
std::size_t size_of(DataType type);

// The checks every rank of a `size`-rank world makes of an all-to-all-v's counts (one per rank,
// none negative, what `rank` sends itself equal to what it expects from itself): InvalidArgument
// naming the first bad count.
void check_all_to_all_counts(int rank, int size, const std::vector<std::int64_t>& send_counts,
                             const std::vector<std::int64_t>& recv_counts);

template <class T>
constexpr DataType data_type_of();
template <>
constexpr DataType data_type_of<float>() { return DataType::float32; }
template <>
constexpr DataType data_type_of<double>() { return DataType::float64; }
template <>
constexpr DataType data_type_of<std::int64_t>() { return DataType::int64; }

// An all-to-all-v in flight (Communicator::start_all_to_all_v); finish() completes it. Until then
// the send buffer must stay alive and unchanged, and the receive buffer alive and neither read nor
// written. The communicator must outlive the handle. Destroying a handle that was not finished
// (unwinding after an exception) waits for the transfer to stop touching both buffers, drops any
// error, and leaves the receive buffer unspecified.
class PendingAllToAll {
 public:
  virtual ~PendingAllToAll() = default;
  // Completes the exchange: afterwards the messages are in the receive buffer for every reader
  // that the communicator orders (the host for host buffers; for GPU buffers, the work halo
  // queues on that GPU). Call once; throws CommError (and the like) for a failed transfer.
  virtual void finish() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Where the buffers passed to the collectives must live.
  virtual kernels::Device device() const = 0;
  // Each collective's result is there on return for the readers the communicator orders, as for
  // PendingAllToAll::finish: the host for host buffers; for GPU buffers, the work halo queues on
  // that GPU next (NcclCommunicator need not wait on the host; host reads such as
  // Tensor::to_vector go through halo's stream and see the result).

  // data[i] = Σ over ranks of data[i], for count elements, on every rank. Deterministic: the
  // result does not depend on timing (the same reduction order every call).
  virtual void all_reduce(void* data, std::int64_t count, DataType type) = 0;
  // Rank r sends send_counts[q] elements to rank q, taken from `send` packed in rank order
  // (q = 0 first), and receives recv_counts[q] elements from q into `recv`, packed the same way.
  // Both count vectors have size() entries; rank q's send_counts[r] must equal rank r's
  // recv_counts[q] (not checked: the callers derive both sides from the same plan).
  virtual void all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                            const std::vector<std::int64_t>& recv_counts, DataType type) = 0;
  // The same exchange, started: returns once the messages are posted (MPI) or queued (NCCL),
  // usually before they arrive, so the caller can work meanwhile; the handle's finish() completes
  // it. Arguments are checked here, as all_to_all_v checks them. Every rank starts its
  // collectives in the same order. Several may be in flight at once. This default, for a
  // communicator without a non-blocking path, runs all_to_all_v here and returns a handle with
  // nothing left to do.
  virtual std::unique_ptr<PendingAllToAll> start_all_to_all_v(const void* send,
                                                              const std::vector<std::int64_t>& send_counts,
                                                              void* recv,
                                                              const std::vector<std::int64_t>& recv_counts,
                                                              DataType type);
  // Copies root's count elements at data to every rank's data.
  virtual void broadcast(void* data, std::int64_t count, DataType type, int root) = 0;
  virtual void barrier() = 0;
};

// The communicator of a single process: every collective is the identity (all_to_all_v copies
// the rank's message to itself; started, it copies in finish(), as late as a transfer may land).
// Host buffers.
class LocalCommunicator : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  kernels::Device device() const override { return kernels::Device::cpu(); }
  void all_reduce(void* data, std::int64_t count, DataType type) override;
  void all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                    const std::vector<std::int64_t>& recv_counts, DataType type) override;
  std::unique_ptr<PendingAllToAll> start_all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts,
                                                      void* recv, const std::vector<std::int64_t>& recv_counts,
                                                      DataType type) override;
  void broadcast(void* data, std::int64_t count, DataType type, int root) override;
  void barrier() override {}
};

// Typed conveniences.
template <class T>
void all_reduce(Communicator& comm, std::vector<T>& values) {
  comm.all_reduce(values.data(), static_cast<std::int64_t>(values.size()), data_type_of<T>());
}
template <class T>
T all_reduce_value(Communicator& comm, T value) {
  comm.all_reduce(&value, 1, data_type_of<T>());
  return value;
}
// Every rank's `value`, in rank order, on every rank (an all-reduce of one slot per rank).
template <class T>
std::vector<T> all_gather_value(Communicator& comm, T value) {
  std::vector<T> values(static_cast<std::size_t>(comm.size()), T{});
  values[static_cast<std::size_t>(comm.rank())] = value;
  all_reduce(comm, values);
  return values;
}

}  // namespace halo::train::dist
