// LocalCommunicator: the collectives of a one-rank world; and what every Communicator shares
// (element sizes, the blocking fallback of start_all_to_all_v).
#include <cstring>
#include <memory>
#include <string>

#include "graph/base/error.hpp"
#include "train/dist/communicator.hpp"

namespace halo::train::dist {
namespace {

// The handle of an exchange that completed before its start returned.
class CompletedAllToAll final : public PendingAllToAll {
 public:
  void finish() override {}
};

// The rank's message to itself, copied when the exchange finishes. Destroyed unfinished, it
// copies nothing: no transfer is under way.
class LocalAllToAll final : public PendingAllToAll {
 public:
  LocalAllToAll(const void* send, void* recv, std::size_t bytes) : send_(send), recv_(recv), bytes_(bytes) {}
  void finish() override {
    if (bytes_ > 0) std::memmove(recv_, send_, bytes_);
  }

 private:
  const void* send_;
  void* recv_;
  std::size_t bytes_;
};

}  // namespace

std::size_t size_of(DataType type) {
  switch (type) {
    case DataType::float32: return 4;
    case DataType::float64: return 8;
    case DataType::int64: return 8;
  }
  throw InvalidArgument("size_of: unknown DataType");
}

void check_all_to_all_counts(int rank, int size, const std::vector<std::int64_t>& send_counts,
                             const std::vector<std::int64_t>& recv_counts) {
  const auto p = static_cast<std::size_t>(size);
  HALO_EXPECTS(send_counts.size() == p && recv_counts.size() == p,
               "expected " + std::to_string(p) + " send and receive counts, got " + std::to_string(send_counts.size()) +
                   " and " + std::to_string(recv_counts.size()));
  for (std::size_t q = 0; q < p; ++q)
    HALO_EXPECTS(send_counts[q] >= 0 && recv_counts[q] >= 0,
                 "counts must be >= 0, got " + std::to_string(send_counts[q]) + " to send to and " +
                     std::to_string(recv_counts[q]) + " to receive from rank " + std::to_string(q));
  const auto self = static_cast<std::size_t>(rank);
  HALO_EXPECTS(send_counts[self] == recv_counts[self],
               "rank " + std::to_string(rank) + " sends itself " + std::to_string(send_counts[self]) +
                   " elements but expects " + std::to_string(recv_counts[self]));
}

std::unique_ptr<PendingAllToAll> Communicator::start_all_to_all_v(const void* send,
                                                                  const std::vector<std::int64_t>& send_counts,
                                                                  void* recv,
                                                                  const std::vector<std::int64_t>& recv_counts,
                                                                  DataType type) {
  all_to_all_v(send, send_counts, recv, recv_counts, type);
  return std::make_unique<CompletedAllToAll>();
}

void LocalCommunicator::all_reduce(void* /*data*/, std::int64_t count, DataType /*type*/) {
  HALO_EXPECTS(count >= 0, "count must be >= 0, got " + std::to_string(count));
}

void LocalCommunicator::all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                                     const std::vector<std::int64_t>& recv_counts, DataType type) {
  start_all_to_all_v(send, send_counts, recv, recv_counts, type)->finish();
}

std::unique_ptr<PendingAllToAll> LocalCommunicator::start_all_to_all_v(const void* send,
                                                                       const std::vector<std::int64_t>& send_counts,
                                                                       void* recv,
                                                                       const std::vector<std::int64_t>& recv_counts,
                                                                       DataType type) {
  HALO_EXPECTS(send_counts.size() == 1 && recv_counts.size() == 1 && send_counts[0] == recv_counts[0] &&
                   send_counts[0] >= 0,
               "a one-rank world sends exactly what it receives; got " + std::to_string(send_counts.size()) +
                   " send and " + std::to_string(recv_counts.size()) + " receive counts" +
                   (send_counts.size() == 1 && recv_counts.size() == 1
                        ? " (" + std::to_string(send_counts[0]) + " sent, " + std::to_string(recv_counts[0]) +
                              " received)"
                        : std::string()));
  return std::make_unique<LocalAllToAll>(send, recv, static_cast<std::size_t>(send_counts[0]) * size_of(type));
}

void LocalCommunicator::broadcast(void* /*data*/, std::int64_t count, DataType /*type*/, int root) {
  HALO_EXPECTS(root == 0 && count >= 0, "root must be 0 and count >= 0, got root " + std::to_string(root) +
                                            ", count " + std::to_string(count));
}

}  // namespace halo::train::dist
