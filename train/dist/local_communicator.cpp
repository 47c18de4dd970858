// LocalCommunicator: the collectives of a one-rank world.
#include <cstring>
#include <string>

#include "graph/base/error.hpp"
#include "train/dist/communicator.hpp"

namespace halo::train::dist {

std::size_t size_of(DataType type) {
  switch (type) {
    case DataType::float32: return 4;
    case DataType::float64: return 8;
    case DataType::int64: return 8;
  }
  throw InvalidArgument("size_of: unknown DataType");
}

void LocalCommunicator::all_reduce(void* /*data*/, std::int64_t count, DataType /*type*/) {
  HALO_EXPECTS(count >= 0, "count must be >= 0, got " + std::to_string(count));
}

void LocalCommunicator::all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                                     const std::vector<std::int64_t>& recv_counts, DataType type) {
  HALO_EXPECTS(send_counts.size() == 1 && recv_counts.size() == 1 && send_counts[0] == recv_counts[0],
               "a one-rank world sends exactly what it receives; got " + std::to_string(send_counts.size()) +
                   " send and " + std::to_string(recv_counts.size()) + " receive counts");
  if (send_counts[0] > 0) std::memmove(recv, send, static_cast<std::size_t>(send_counts[0]) * size_of(type));
}

void LocalCommunicator::broadcast(void* /*data*/, std::int64_t count, DataType /*type*/, int root) {
  HALO_EXPECTS(root == 0 && count >= 0, "root must be 0 and count >= 0, got root " + std::to_string(root) +
                                            ", count " + std::to_string(count));
}

}  // namespace halo::train::dist
