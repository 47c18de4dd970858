// Time spent in each kernel family, accumulated by the dispatch functions, so the trainer can
// report the split into SpMM / GEMM / other.
#pragma once

namespace halo::kernels {

enum class KernelFamily { spmm, gemm, other };

struct KernelTimes {
  double spmm_seconds = 0.0;
  double gemm_seconds = 0.0;
  double other_seconds = 0.0;
};

// Totals since the last reset (all threads of the calling process).
KernelTimes kernel_times();
void reset_kernel_times();

// Adds the lifetime of the object to a family's total.
class ScopedKernelTimer {
 public:
  explicit ScopedKernelTimer(KernelFamily family);
  ~ScopedKernelTimer();
  ScopedKernelTimer(const ScopedKernelTimer&) = delete;
  ScopedKernelTimer& operator=(const ScopedKernelTimer&) = delete;

 private:
  KernelFamily family_;
  double start_;
};

}  // namespace halo::kernels
