// Device naming and the availability checks; the CUDA queries live in cuda/device.cu.
#include "kernels/device.hpp"

#include <charconv>

#include "graph/base/error.hpp"

namespace halo::kernels {

#ifdef HALO_WITH_CUDA
namespace cuda {
int device_count_or_zero();
}
#endif

std::string Device::to_string() const {
  return type == DeviceType::cpu ? std::string("cpu") : "cuda:" + std::to_string(index);
}

Device parse_device(const std::string& text) {
  if (text == "cpu") return Device::cpu();
  if (text == "cuda" || text == "gpu") return Device::cuda(0);
  const std::string prefix = "cuda:";
  if (text.compare(0, prefix.size(), prefix) == 0) {
    int index = -1;
    const char* first = text.data() + prefix.size();
    const char* last = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(first, last, index);
    if (ec == std::errc() && ptr == last && first != last && index >= 0) return Device::cuda(index);
  }
  throw InvalidArgument("parse_device: unknown device '" + text + "' (expected cpu, cuda or cuda:N)");
}

bool built_with_cuda() {
#ifdef HALO_WITH_CUDA
  return true;
#else
  return false;
#endif
}

int cuda_device_count() {
#ifdef HALO_WITH_CUDA
  // Asked once per process: require_device runs on every kernel call (the dispatch's own check and
  // its ScopedKernelTimer's), and the count the driver reports does not change while it runs.
  static const int count = cuda::device_count_or_zero();
  return count;
#else
  return 0;
#endif
}

void require_device(const Device& device) {
  if (!device.is_cuda()) return;
  if (!built_with_cuda())
    throw UnsupportedError("device " + device.to_string() +
                           " requested, but this halo was built without CUDA (configure with -DHALO_WITH_CUDA=ON)");
  const int count = cuda_device_count();
  if (count == 0) throw UnsupportedError("device " + device.to_string() + " requested, but no CUDA GPU is visible");
  if (device.index >= count)
    throw UnsupportedError("device " + device.to_string() + " requested, but only " + std::to_string(count) +
                           " CUDA GPU(s) are visible");
}

}  // namespace halo::kernels
