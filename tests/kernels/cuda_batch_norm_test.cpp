// GPU tests of kernels/cuda/batch_norm.cu against the CPU twin: the statistics (same bits on every
// run), the forward pass, the backward sums and the backward pass.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/random.hpp"
#include "kernels/batch_norm.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {
constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();

// mean and 1 / sqrt(var + eps) (2 x cols) from batch_norm_sums' output, on the host.
Tensor stats_from_sums(const Tensor& sums, std::int64_t rows) {
  const std::vector<float> s = sums.to_vector();
  const std::int64_t cols = sums.cols();
  std::vector<float> stats(static_cast<std::size_t>(2 * cols));
  for (std::int64_t j = 0; j < cols; ++j) {
    const double mean = s[static_cast<std::size_t>(j)] / static_cast<double>(rows);
    const double var = s[static_cast<std::size_t>(cols + j)] / static_cast<double>(rows) - mean * mean;
    stats[static_cast<std::size_t>(j)] = static_cast<float>(mean);
    stats[static_cast<std::size_t>(cols + j)] = static_cast<float>(1.0 / std::sqrt(var + 1e-5));
  }
  return Tensor::from_vector(2, cols, stats);
}
}  // namespace

TEST_CASE("batch norm on a GPU matches the CPU twin, statistics repeating their bits", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(121, 0);
  const std::int64_t rows = 20000, cols = 33;
  const Tensor x = test::random_tensor(rng, rows, cols, -2.0, 3.0);
  const Tensor xg = test::on_gpu(x);
  Tensor cpu_sums = test::poisoned(2, cols);
  batch_norm_sums(x.view(), cpu_sums.view());
  Tensor gpu_sums = Tensor::full(2, cols, nan_value, Device::cuda());
  Tensor again = Tensor::full(2, cols, nan_value, Device::cuda());
  batch_norm_sums(xg.view(), gpu_sums.view());
  batch_norm_sums(xg.view(), again.view());
  CHECK(test::identical(test::on_host(gpu_sums).view(), test::on_host(again).view()));
  CHECK(test::difference(test::on_host(gpu_sums).view(), test::to_dense(cpu_sums.view()), 1e-6, 1e-6) == "");

  const Tensor stats = stats_from_sums(cpu_sums, rows);
  const Tensor gamma = test::random_tensor(rng, 1, cols, 0.5, 1.5);
  const Tensor beta = test::random_tensor(rng, 1, cols);
  const Tensor stats_g = test::on_gpu(stats), gamma_g = test::on_gpu(gamma), beta_g = test::on_gpu(beta);
  Tensor cpu_y = test::poisoned(rows, cols);
  batch_norm_forward(x.view(), stats.view(), gamma.view(), beta.view(), cpu_y.view());
  Tensor gpu_y = Tensor::full(rows, cols, nan_value, Device::cuda());
  batch_norm_forward(xg.view(), stats_g.view(), gamma_g.view(), beta_g.view(), gpu_y.view());
  CHECK(test::difference(test::on_host(gpu_y).view(), test::to_dense(cpu_y.view()), 1e-6, 1e-6) == "");

  const Tensor gy = test::random_tensor(rng, rows, cols);
  const Tensor gy_g = test::on_gpu(gy);
  Tensor cpu_reduce = test::poisoned(2, cols);
  batch_norm_backward_sums(x.view(), stats.view(), gy.view(), cpu_reduce.view());
  Tensor gpu_reduce = Tensor::full(2, cols, nan_value, Device::cuda());
  batch_norm_backward_sums(xg.view(), stats_g.view(), gy_g.view(), gpu_reduce.view());
  CHECK(test::difference(test::on_host(gpu_reduce).view(), test::to_dense(cpu_reduce.view()), 1e-6, 1e-5) == "");

  Tensor cpu_gx = test::poisoned(rows, cols);
  Tensor cpu_gg = Tensor::full(1, cols, 0.25f), cpu_gb = Tensor::full(1, cols, -0.5f);
  batch_norm_backward(x.view(), stats.view(), gamma.view(), gy.view(), cpu_reduce.view(), static_cast<double>(rows),
                      cpu_gx.view(), cpu_gg.view(), cpu_gb.view());
  Tensor gpu_gx = Tensor::full(rows, cols, nan_value, Device::cuda());
  Tensor gpu_gg = Tensor::full(1, cols, 0.25f, Device::cuda()), gpu_gb = Tensor::full(1, cols, -0.5f, Device::cuda());
  // The CPU's reduce as input to both, so the comparison tests the backward kernel alone.
  batch_norm_backward(xg.view(), stats_g.view(), gamma_g.view(), gy_g.view(), test::on_gpu(cpu_reduce).view(),
                      static_cast<double>(rows), gpu_gx.view(), gpu_gg.view(), gpu_gb.view());
  CHECK(test::difference(test::on_host(gpu_gx).view(), test::to_dense(cpu_gx.view()), 1e-5, 1e-6) == "");
  CHECK(test::identical(test::on_host(gpu_gg).view(), cpu_gg.view()));
  CHECK(test::identical(test::on_host(gpu_gb).view(), cpu_gb.view()));
}
