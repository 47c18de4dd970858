// Per-family kernel time totals: lock-free nanosecond counters shared by all threads, fed by host
// clocks (CPU) and by GPU event pairs collected when the totals are read.
#include "kernels/timing.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "kernels/cuda/kernel_timers.hpp"

namespace halo::kernels {
namespace {

std::atomic<std::int64_t> g_nanoseconds[3];

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double seconds_of(KernelFamily family) {
  return static_cast<double>(g_nanoseconds[static_cast<int>(family)].load(std::memory_order_relaxed)) * 1e-9;
}

}  // namespace

KernelTimes kernel_times() {
  const std::array<std::int64_t, 3> gpu = cuda::collect_kernel_timers();
  for (int f = 0; f < 3; ++f) g_nanoseconds[f].fetch_add(gpu[static_cast<std::size_t>(f)], std::memory_order_relaxed);
  KernelTimes t;
  t.spmm_seconds = seconds_of(KernelFamily::spmm);
  t.gemm_seconds = seconds_of(KernelFamily::gemm);
  t.other_seconds = seconds_of(KernelFamily::other);
  return t;
}

void reset_kernel_times() {
  cuda::discard_kernel_timers();
  for (auto& counter : g_nanoseconds) counter.store(0, std::memory_order_relaxed);
}

ScopedKernelTimer::ScopedKernelTimer(KernelFamily family, Device device) : family_(family) {
  if (device.is_cuda()) {
    require_device(device);  // the dispatch's own refusal, before any CUDA call
    gpu_timer_ = cuda::start_kernel_timer(device.index);
  } else {
    start_ = now_seconds();
  }
}

ScopedKernelTimer::~ScopedKernelTimer() {
  if (gpu_timer_ >= 0) {
    cuda::stop_kernel_timer(gpu_timer_, family_);
    return;
  }
  const auto elapsed_ns = static_cast<std::int64_t>((now_seconds() - start_) * 1e9);
  g_nanoseconds[static_cast<int>(family_)].fetch_add(elapsed_ns, std::memory_order_relaxed);
}

}  // namespace halo::kernels
