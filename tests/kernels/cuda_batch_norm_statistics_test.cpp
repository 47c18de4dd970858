// GPU tests of the batch-norm statistics kernels of kernels/cuda/batch_norm.cu against the CPU
// twin: training statistics and running update, and evaluation statistics, bit for bit (both
// compute in double with correctly rounded operations and no fused multiply-adds).
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>

#include "graph/base/random.hpp"
#include "kernels/batch_norm.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

TEST_CASE("batch-norm statistics on a GPU have the CPU twin's bits", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(141, 0);
  const std::int64_t rows = 5000, cols = 300;
  const Tensor x = test::random_tensor(rng, rows, cols, -2.0, 3.0);
  Tensor sums = Tensor::empty(2, cols);
  batch_norm_sums(x.view(), sums.view());
  // A column whose rounding makes E[x²] - E[x]² negative, to take the clamp on both sides.
  sums.view().row(0)[0] = static_cast<float>(rows) / 4.0f;
  sums.view().row(1)[0] = 0.2499f * static_cast<float>(rows) / 4.0f;
  const Tensor mean0 = test::random_tensor(rng, 1, cols, -1.0, 1.0);
  const Tensor var0 = test::random_tensor(rng, 1, cols, 0.5, 2.0);

  Tensor cpu_stats = test::poisoned(2, cols);
  Tensor cpu_mean = mean0.to(Device::cpu()), cpu_var = var0.to(Device::cpu());
  batch_norm_statistics(sums.view(), static_cast<double>(rows), 1e-5f, 0.1f, cpu_stats.view(), cpu_mean.view(),
                        cpu_var.view());
  const Tensor sums_g = test::on_gpu(sums);
  Tensor gpu_stats = Tensor::full(2, cols, std::numeric_limits<float>::quiet_NaN(), Device::cuda());
  Tensor gpu_mean = test::on_gpu(mean0), gpu_var = test::on_gpu(var0);
  batch_norm_statistics(sums_g.view(), static_cast<double>(rows), 1e-5f, 0.1f, gpu_stats.view(), gpu_mean.view(),
                        gpu_var.view());
  CHECK(test::identical(test::on_host(gpu_stats).view(), cpu_stats.view()));
  CHECK(test::identical(test::on_host(gpu_mean).view(), cpu_mean.view()));
  CHECK(test::identical(test::on_host(gpu_var).view(), cpu_var.view()));

  Tensor cpu_eval = test::poisoned(2, cols);
  batch_norm_running_statistics(cpu_mean.view(), cpu_var.view(), 1e-5f, cpu_eval.view());
  Tensor gpu_eval = Tensor::full(2, cols, std::numeric_limits<float>::quiet_NaN(), Device::cuda());
  batch_norm_running_statistics(gpu_mean.view(), gpu_var.view(), 1e-5f, gpu_eval.view());
  CHECK(test::identical(test::on_host(gpu_eval).view(), cpu_eval.view()));
}
