// StagingCopies in a build without CUDA: the feature pipeline creates one only for a GPU device,
// which such a build refuses first (kernels::require_device); this keeps the program linkable and
// throws UnsupportedError all the same.
#include <string>

#include "graph/base/error.hpp"
#include "kernels/cuda/staging_copies.hpp"

namespace halo::kernels::cuda {
namespace {
[[noreturn]] void missing(const char* op) {
  throw UnsupportedError(std::string(op) + ": this halo was built without CUDA (configure with -DHALO_WITH_CUDA=ON)");
}
}  // namespace

struct StagingCopies::State {};

StagingCopies::StagingCopies(int, int, std::size_t, std::size_t) { missing("StagingCopies"); }
StagingCopies::~StagingCopies() = default;
int StagingCopies::device() const { missing("StagingCopies::device"); }
std::size_t StagingCopies::slot_bytes() const { missing("StagingCopies::slot_bytes"); }
void* StagingCopies::host(int) const { missing("StagingCopies::host"); }
void* StagingCopies::device_buffer(int) const { missing("StagingCopies::device_buffer"); }
void StagingCopies::begin_fill(int) { missing("StagingCopies::begin_fill"); }
void StagingCopies::upload(int, std::size_t, std::size_t) { missing("StagingCopies::upload"); }
void StagingCopies::upload_from(int, std::size_t, const void*, std::size_t) { missing("StagingCopies::upload_from"); }
void StagingCopies::copy_from_device(int, std::size_t, const void*, std::size_t) {
  missing("StagingCopies::copy_from_device");
}
void StagingCopies::upload_widened(int, std::size_t, std::size_t, HalfFormat) {
  missing("StagingCopies::upload_widened");
}
void StagingCopies::end_fill(int) { missing("StagingCopies::end_fill"); }
void StagingCopies::use(int) { missing("StagingCopies::use"); }
void StagingCopies::released(int) { missing("StagingCopies::released"); }
bool is_pinned_host(const void*) { return false; }
PinnedRegistration::PinnedRegistration(void*, std::size_t) { missing("PinnedRegistration"); }
PinnedRegistration::~PinnedRegistration() = default;
double pinned_upload_bandwidth(int, std::size_t, int) { missing("pinned_upload_bandwidth"); }

}  // namespace halo::kernels::cuda
