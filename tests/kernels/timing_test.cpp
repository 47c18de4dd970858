// Tests of kernels/timing.*: scoped timers add to their own family, the dispatch functions time
// themselves, and reset clears the totals.
#include "kernels/timing.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "kernels/tensor.hpp"

using namespace halo::kernels;

TEST_CASE("ScopedKernelTimer adds its lifetime to its family only", "[kernels]") {
  reset_kernel_times();
  {
    ScopedKernelTimer timer(KernelFamily::gemm);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const KernelTimes t = kernel_times();
  CHECK(t.gemm_seconds >= 0.019);
  CHECK(t.gemm_seconds < 5.0);
  CHECK(t.spmm_seconds == 0.0);
  CHECK(t.other_seconds == 0.0);
  reset_kernel_times();
  CHECK(kernel_times().gemm_seconds == 0.0);
}

TEST_CASE("kernel calls are timed under their family", "[kernels]") {
  reset_kernel_times();
  const Tensor a = Tensor::full(64, 64, 1.0f);
  Tensor c = Tensor::empty(64, 64);
  gemm(a.view(), Transpose::no, a.view(), Transpose::no, c.view());
  CHECK(kernel_times().gemm_seconds > 0.0);
  CHECK(kernel_times().other_seconds == 0.0);
  relu_forward(a.view(), c.view());
  CHECK(kernel_times().other_seconds > 0.0);
  CHECK(kernel_times().spmm_seconds == 0.0);
}
