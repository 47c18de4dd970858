// kernels/cuda/kernel_timers.hpp in a build without CUDA: no GPU timer is ever started (the
// dispatch functions refuse GPU operands first), so there is never anything to collect.
#include "kernels/cuda/kernel_timers.hpp"

#include "graph/base/error.hpp"

namespace halo::kernels::cuda {

std::int64_t start_kernel_timer(int) {
  throw UnsupportedError("kernel timers: this halo was built without CUDA (configure with -DHALO_WITH_CUDA=ON)");
}
void stop_kernel_timer(std::int64_t, KernelFamily) noexcept {}
std::array<std::int64_t, 3> collect_kernel_timers() { return {0, 0, 0}; }
void discard_kernel_timers() noexcept {}

}  // namespace halo::kernels::cuda
