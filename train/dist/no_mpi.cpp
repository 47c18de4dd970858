// MpiSession and MpiCommunicator in a build without MPI (HALO_WITH_MPI off): they say so.
#include <cstdlib>
#include <memory>

#include "graph/base/error.hpp"
#include "train/dist/mpi_communicator.hpp"

namespace halo::train::dist {
namespace {

[[noreturn]] void no_mpi() {
  throw UnsupportedError("this build of halo has no MPI (configure with -DHALO_WITH_MPI=ON)");
}

}  // namespace

bool mpi_available() { return false; }

MpiSession::MpiSession() { no_mpi(); }
MpiSession::~MpiSession() = default;
int MpiSession::world_rank() const { no_mpi(); }
int MpiSession::world_size() const { no_mpi(); }
void MpiSession::abort(int code) const { std::exit(code); }

struct MpiCommunicator::Impl {};
MpiCommunicator::MpiCommunicator(const MpiSession& /*session*/, double /*collective_timeout_s*/) { no_mpi(); }
MpiCommunicator::~MpiCommunicator() = default;
int MpiCommunicator::rank() const { no_mpi(); }
int MpiCommunicator::size() const { no_mpi(); }
void MpiCommunicator::all_reduce(void*, std::int64_t, DataType) { no_mpi(); }
void MpiCommunicator::all_to_all_v(const void*, const std::vector<std::int64_t>&, void*,
                                   const std::vector<std::int64_t>&, DataType) {
  no_mpi();
}
std::unique_ptr<PendingAllToAll> MpiCommunicator::start_all_to_all_v(const void*, const std::vector<std::int64_t>&,
                                                                     void*, const std::vector<std::int64_t>&,
                                                                     DataType) {
  no_mpi();
}
void MpiCommunicator::broadcast(void*, std::int64_t, DataType, int) { no_mpi(); }
void MpiCommunicator::barrier() { no_mpi(); }

}  // namespace halo::train::dist
