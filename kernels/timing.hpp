// Time spent in each kernel family, accumulated by the dispatch functions, so the trainer can
// report the split into SpMM / GEMM / other. On the CPU a timer is the host clock around the
// call; on a GPU it is a pair of events around the queued work (kernels/cuda/kernel_timers.hpp),
// resolved when the totals are read, so the split is the device's on both.
#pragma once

#include <cstdint>

#include "kernels/device.hpp"

namespace halo::kernels {

enum class KernelFamily { spmm = 0, gemm = 1, other = 2 };

struct KernelTimes {
  double spmm_seconds = 0.0;
  double gemm_seconds = 0.0;
  double other_seconds = 0.0;
};

// Totals since the last reset (all threads of the calling process). Waits for the GPU work of
// every GPU timer stopped so far.
KernelTimes kernel_times();
void reset_kernel_times();

// Adds the time of the work done (CPU) or queued (GPU) during the object's lifetime on `device`
// to a family's total.
class ScopedKernelTimer {
 public:
  explicit ScopedKernelTimer(KernelFamily family, Device device = Device::cpu());
  ~ScopedKernelTimer();
  ScopedKernelTimer(const ScopedKernelTimer&) = delete;
  ScopedKernelTimer& operator=(const ScopedKernelTimer&) = delete;

 private:
  KernelFamily family_;
  double start_ = 0.0;
  std::int64_t gpu_timer_ = -1;  // the GPU timer's id, -1 on the CPU
};

}  // namespace halo::kernels
