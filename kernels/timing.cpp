// Per-family kernel time totals: lock-free nanosecond counters shared by all threads.
#include "kernels/timing.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>

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
  KernelTimes t;
  t.spmm_seconds = seconds_of(KernelFamily::spmm);
  t.gemm_seconds = seconds_of(KernelFamily::gemm);
  t.other_seconds = seconds_of(KernelFamily::other);
  return t;
}

void reset_kernel_times() {
  for (auto& counter : g_nanoseconds) counter.store(0, std::memory_order_relaxed);
}

ScopedKernelTimer::ScopedKernelTimer(KernelFamily family) : family_(family), start_(now_seconds()) {}

ScopedKernelTimer::~ScopedKernelTimer() {
  const auto elapsed_ns = static_cast<std::int64_t>((now_seconds() - start_) * 1e9);
  g_nanoseconds[static_cast<int>(family_)].fetch_add(elapsed_ns, std::memory_order_relaxed);
}

}  // namespace halo::kernels
