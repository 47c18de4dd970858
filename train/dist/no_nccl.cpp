// NcclCommunicator in a build without NCCL (HALO_WITH_NCCL off): it says so.
#include <memory>

#include "graph/base/error.hpp"
#include "train/dist/nccl_communicator.hpp"

namespace halo::train::dist {
namespace {

[[noreturn]] void no_nccl() {
  throw UnsupportedError("this build of halo has no NCCL (configure with -DHALO_WITH_NCCL=ON)");
}

}  // namespace

bool nccl_available() { return false; }
void require_nccl() { no_nccl(); }

struct NcclCommunicator::Impl {};
NcclCommunicator::NcclCommunicator(Communicator& /*bootstrap*/, kernels::Device /*device*/,
                                   double /*collective_timeout_s*/) {
  no_nccl();
}
NcclCommunicator::~NcclCommunicator() = default;
int NcclCommunicator::rank() const { no_nccl(); }
int NcclCommunicator::size() const { no_nccl(); }
kernels::Device NcclCommunicator::device() const { no_nccl(); }
void NcclCommunicator::all_reduce(void*, std::int64_t, DataType) { no_nccl(); }
void NcclCommunicator::all_to_all_v(const void*, const std::vector<std::int64_t>&, void*,
                                    const std::vector<std::int64_t>&, DataType) {
  no_nccl();
}
std::unique_ptr<PendingAllToAll> NcclCommunicator::start_all_to_all_v(const void*, const std::vector<std::int64_t>&,
                                                                      void*, const std::vector<std::int64_t>&,
                                                                      DataType) {
  no_nccl();
}
void NcclCommunicator::broadcast(void*, std::int64_t, DataType, int) { no_nccl(); }
void NcclCommunicator::barrier() { no_nccl(); }

}  // namespace halo::train::dist
