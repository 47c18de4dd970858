// MpiSession and MpiCommunicator over MPI (built when HALO_WITH_MPI is on). Every collective is
// posted non-blocking and waited for by polling MPI_Testall (train/dist/detail/collective_wait.hpp:
// sleeps growing to 1 ms between polls, so a waiting rank does not burn a core) up to the
// collective timeout, past which the rank throws CommError naming itself and the wait; the
// all-to-all-v is also started and finished apart.
#include "train/dist/mpi_communicator.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "train/dist/detail/collective_wait.hpp"

namespace halo::train::dist {
namespace {

// Largest piece sent in one MPI call, in bytes: MPI counts are int.
constexpr std::int64_t max_piece_bytes = std::int64_t{1} << 30;

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw CommError(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

MPI_Datatype mpi_type(DataType type) {
  switch (type) {
    case DataType::float32: return MPI_FLOAT;
    case DataType::float64: return MPI_DOUBLE;
    case DataType::int64: return MPI_INT64_T;
  }
  throw InvalidArgument("mpi_type: unknown DataType");
}

// Calls fn(offset, count) for consecutive pieces of at most max_piece_bytes of `count` elements.
template <class F>
void for_each_piece(std::int64_t count, DataType type, F&& fn) {
  const std::int64_t per_piece = max_piece_bytes / static_cast<std::int64_t>(size_of(type));
  for (std::int64_t offset = 0; offset < count; offset += per_piece)
    fn(offset, static_cast<int>(std::min(per_piece, count - offset)));
}

}  // namespace

bool mpi_available() { return true; }

MpiSession::MpiSession() {
  int initialized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  HALO_EXPECTS(!initialized, "MPI is already initialised: one MpiSession per process");
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw CommError("MPI provides no MPI_THREAD_FUNNELED support (level " + std::to_string(provided) + ")");
  }
}

MpiSession::~MpiSession() { MPI_Finalize(); }

int MpiSession::world_rank() const {
  int rank = 0;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  return rank;
}

int MpiSession::world_size() const {
  int size = 0;
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  return size;
}

void MpiSession::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; if an implementation does, end this rank anyway
}

struct MpiCommunicator::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  double timeout_s = default_collective_timeout_s;
};

namespace {

// Waits for every request, polling; CommError when MPI reports an error or when `timeout_s` pass
// without all of them completing. `what` names the collective in the message (the program puts
// the rank in front of it).
void wait_all(std::vector<MPI_Request>& requests, const char* what, double timeout_s) {
  if (requests.empty()) return;
  const detail::WaitResult result = detail::poll_until_done(
      [&] {
        int done = 0;
        check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
              "MPI_Testall");
        return done != 0;
      },
      [] { return true; }, timeout_s);
  if (result.outcome == detail::WaitOutcome::timed_out)
    throw CommError(std::string("no progress in a collective (") + what + ") for " +
                    std::to_string(static_cast<long long>(timeout_s)) +
                    " s (--collective-timeout): a peer may have stopped, died or been swapped out");
  requests.clear();
}

// The requests of a started all-to-all-v; finish() waits for them all.
class MpiAllToAll final : public PendingAllToAll {
 public:
  explicit MpiAllToAll(double timeout_s) : timeout_s_(timeout_s) {}
  MpiAllToAll(const MpiAllToAll&) = delete;
  MpiAllToAll& operator=(const MpiAllToAll&) = delete;
  // Unfinished: the buffers must not be freed under MPI's feet, so wait here too (the peers are
  // in the same exchange, so their halves of it are posted or will be), at most the timeout.
  ~MpiAllToAll() override {
    try {
      wait_all(requests, "an abandoned all-to-all-v", timeout_s_);
    } catch (...) {
      // Unwinding already: the error that abandoned the exchange is the one to report.
    }
  }
  void finish() override { wait_all(requests, "all-to-all-v", timeout_s_); }

  std::vector<MPI_Request> requests;

 private:
  double timeout_s_;
};

}  // namespace

MpiCommunicator::MpiCommunicator(const MpiSession& /*session*/, double collective_timeout_s)
    : impl_(std::make_unique<Impl>()) {
  HALO_EXPECTS(collective_timeout_s > 0,
               "MpiCommunicator: the collective timeout must be > 0 s, got " + std::to_string(collective_timeout_s));
  impl_->timeout_s = collective_timeout_s;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &impl_->comm), "MPI_Comm_dup");
  check(MPI_Comm_set_errhandler(impl_->comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check(MPI_Comm_rank(impl_->comm, &impl_->rank), "MPI_Comm_rank");
  check(MPI_Comm_size(impl_->comm, &impl_->size), "MPI_Comm_size");
}

MpiCommunicator::~MpiCommunicator() {
  if (impl_ && impl_->comm != MPI_COMM_NULL) MPI_Comm_free(&impl_->comm);
}

int MpiCommunicator::rank() const { return impl_->rank; }
int MpiCommunicator::size() const { return impl_->size; }

void MpiCommunicator::all_reduce(void* data, std::int64_t count, DataType type) {
  HALO_EXPECTS(count >= 0, "count must be >= 0, got " + std::to_string(count));
  auto* bytes = static_cast<char*>(data);
  const auto element = static_cast<std::int64_t>(size_of(type));
  std::vector<MPI_Request> requests;
  for_each_piece(count, type, [&](std::int64_t offset, int n) {
    requests.emplace_back(MPI_REQUEST_NULL);
    check(MPI_Iallreduce(MPI_IN_PLACE, bytes + offset * element, n, mpi_type(type), MPI_SUM, impl_->comm,
                         &requests.back()),
          "MPI_Iallreduce");
  });
  wait_all(requests, "all-reduce", impl_->timeout_s);
}

void MpiCommunicator::all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                                   const std::vector<std::int64_t>& recv_counts, DataType type) {
  start_all_to_all_v(send, send_counts, recv, recv_counts, type)->finish();
}

// MPI_Ialltoallv would take the same path inside Open MPI (one non-blocking send and receive per
// peer), but its counts and displacements are int: past 2^31 elements a message, or a buffer,
// could not be described. Point-to-point messages are cut into pieces instead.
std::unique_ptr<PendingAllToAll> MpiCommunicator::start_all_to_all_v(const void* send,
                                                                     const std::vector<std::int64_t>& send_counts,
                                                                     void* recv,
                                                                     const std::vector<std::int64_t>& recv_counts,
                                                                     DataType type) {
  check_all_to_all_counts(impl_->rank, impl_->size, send_counts, recv_counts);
  const auto p = static_cast<std::size_t>(impl_->size);
  const auto self = static_cast<std::size_t>(impl_->rank);
  const auto element = static_cast<std::int64_t>(size_of(type));
  const auto* send_bytes = static_cast<const char*>(send);
  auto* recv_bytes = static_cast<char*>(recv);
  auto pending = std::make_unique<MpiAllToAll>(impl_->timeout_s);
  std::vector<MPI_Request>& requests = pending->requests;
  // Receives first, so a message finds its buffer posted; then the sends; the message to itself
  // is a copy. A failing post throws, and the handle then waits for the requests already posted.
  std::int64_t send_offset = 0;
  std::int64_t recv_offset = 0;
  for (std::size_t q = 0; q < p; ++q) {
    if (q != self) {
      for_each_piece(recv_counts[q], type, [&](std::int64_t offset, int n) {
        requests.emplace_back(MPI_REQUEST_NULL);
        check(MPI_Irecv(recv_bytes + (recv_offset + offset) * element, n, mpi_type(type), static_cast<int>(q), 0,
                        impl_->comm, &requests.back()),
              "MPI_Irecv");
      });
    }
    recv_offset += recv_counts[q];
  }
  std::int64_t self_send = 0;
  std::int64_t self_recv = 0;
  for (std::size_t q = 0; q < p; ++q) {
    if (q == self) {
      self_send = send_offset;
    } else {
      for_each_piece(send_counts[q], type, [&](std::int64_t offset, int n) {
        requests.emplace_back(MPI_REQUEST_NULL);
        check(MPI_Isend(send_bytes + (send_offset + offset) * element, n, mpi_type(type), static_cast<int>(q), 0,
                        impl_->comm, &requests.back()),
              "MPI_Isend");
      });
    }
    send_offset += send_counts[q];
  }
  for (std::size_t q = 0; q < self; ++q) self_recv += recv_counts[q];
  if (send_counts[self] > 0)
    std::memmove(recv_bytes + self_recv * element, send_bytes + self_send * element,
                 static_cast<std::size_t>(send_counts[self] * element));
  return pending;
}

void MpiCommunicator::broadcast(void* data, std::int64_t count, DataType type, int root) {
  HALO_EXPECTS(root >= 0 && root < impl_->size, "root " + std::to_string(root) + " is not a rank");
  auto* bytes = static_cast<char*>(data);
  const auto element = static_cast<std::int64_t>(size_of(type));
  std::vector<MPI_Request> requests;
  for_each_piece(count, type, [&](std::int64_t offset, int n) {
    requests.emplace_back(MPI_REQUEST_NULL);
    check(MPI_Ibcast(bytes + offset * element, n, mpi_type(type), root, impl_->comm, &requests.back()), "MPI_Ibcast");
  });
  wait_all(requests, "broadcast", impl_->timeout_s);
}

void MpiCommunicator::barrier() {
  std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
  check(MPI_Ibarrier(impl_->comm, &requests.back()), "MPI_Ibarrier");
  wait_all(requests, "barrier", impl_->timeout_s);
}

}  // namespace halo::train::dist
