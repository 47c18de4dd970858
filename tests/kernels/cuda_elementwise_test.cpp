// GPU tests of kernels/cuda/elementwise.cu against the CPU twins: bias, ReLU forward and backward
// (in place too), GELU forward and backward, axpby (beta 0 over NaN), column sums (overwrite and
// accumulate, same bits on every run), row normalisation (zero rows left alone), sum of squares;
// strided windows.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/random.hpp"
#include "kernels/elementwise.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {
constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();
}

TEST_CASE("add_bias, relu_forward, relu_backward and axpby on a GPU equal their CPU twins", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(91, 0);
  const Tensor x = test::random_tensor(rng, 513, 37);
  const Tensor bias = test::random_tensor(rng, 1, 37);
  const Tensor g = test::random_tensor(rng, 513, 37);

  Tensor cpu_b = x.clone();
  add_bias(cpu_b.view(), bias.view());
  Tensor gpu_b = test::on_gpu(x);
  add_bias(gpu_b.view(), test::on_gpu(bias).view());
  CHECK(test::identical(test::on_host(gpu_b).view(), cpu_b.view()));

  Tensor cpu_y = test::poisoned(513, 37);
  relu_forward(x.view(), cpu_y.view());
  Tensor gpu_y = Tensor::full(513, 37, nan_value, Device::cuda());
  const Tensor xg = test::on_gpu(x);
  relu_forward(xg.view(), gpu_y.view());
  CHECK(test::identical(test::on_host(gpu_y).view(), cpu_y.view()));
  Tensor in_place = test::on_gpu(x);
  relu_forward(in_place.view(), in_place.view());
  CHECK(test::identical(test::on_host(in_place).view(), cpu_y.view()));

  Tensor cpu_gx = test::poisoned(513, 37);
  relu_backward(cpu_y.view(), g.view(), cpu_gx.view());
  Tensor gpu_gx = test::on_gpu(g);
  relu_backward(gpu_y.view(), gpu_gx.view(), gpu_gx.view());
  CHECK(test::identical(test::on_host(gpu_gx).view(), cpu_gx.view()));
  relu_backward(cpu_y.view(), g.view(), cpu_gx.view(), 1.75f);
  gpu_gx = test::on_gpu(g);
  relu_backward(gpu_y.view(), gpu_gx.view(), gpu_gx.view(), 1.75f);
  CHECK(test::identical(test::on_host(gpu_gx).view(), cpu_gx.view()));

  for (const float beta : {0.0f, -0.75f}) {
    CAPTURE(beta);
    Tensor cpu_out = beta == 0.0f ? test::poisoned(513, 37) : g.clone();
    axpby(2.5f, x.view(), beta, cpu_out.view());
    Tensor gpu_out = beta == 0.0f ? Tensor::full(513, 37, nan_value, Device::cuda()) : test::on_gpu(g);
    axpby(2.5f, xg.view(), beta, gpu_out.view());
    CHECK(test::difference(test::on_host(gpu_out).view(), test::to_dense(cpu_out.view()), 1e-6, 1e-6) == "");
  }
}

TEST_CASE("column_sums and the sums of squares and products on a GPU match the CPU twin and repeat their bits",
          "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(92, 0);
  for (const std::int64_t rows : {1, 1000, 300001}) {
    CAPTURE(rows);
    const Tensor x = test::random_tensor(rng, rows, 19);
    const Tensor xg = test::on_gpu(x);
    Tensor cpu_sums = test::poisoned(1, 19);
    column_sums(x.view(), cpu_sums.view());
    Tensor first = Tensor::full(1, 19, nan_value, Device::cuda());
    Tensor second = Tensor::full(1, 19, nan_value, Device::cuda());
    column_sums(xg.view(), first.view());
    column_sums(xg.view(), second.view());
    CHECK(test::identical(test::on_host(first).view(), test::on_host(second).view()));
    CHECK(test::difference(test::on_host(first).view(), test::to_dense(cpu_sums.view()), 1e-6, 1e-6) == "");
    column_sums(xg.view(), first.view(), true);
    column_sums(x.view(), cpu_sums.view(), true);
    CHECK(test::difference(test::on_host(first).view(), test::to_dense(cpu_sums.view()), 1e-6, 1e-6) == "");
    const double cpu_squares = sum_of_squares(x.view());
    const double gpu_squares = sum_of_squares(xg.view());
    CHECK(gpu_squares == Approx(cpu_squares).epsilon(1e-12));
    CHECK(sum_of_squares(xg.view()) == gpu_squares);
    const Tensor y = test::random_tensor(rng, rows, 19);
    const double cpu_products = sum_of_products(x.view(), y.view());
    CHECK(sum_of_products(xg.view(), test::on_gpu(y).view()) == Approx(cpu_products).epsilon(1e-12));
  }
  // A strided window.
  const Tensor x = test::random_tensor(rng, 50, 7);
  const test::GpuStrided xs(x, 4, 1e30f);
  Tensor sums = Tensor::full(1, 7, nan_value, Device::cuda());
  column_sums(xs.view, sums.view());
  CHECK(test::difference(test::on_host(sums).view(), test::naive_column_sums(test::to_dense(x.view())), 1e-6, 1e-6) ==
        "");
  CHECK(sum_of_squares(xs.view) == Approx(sum_of_squares(x.view())).epsilon(1e-12));
}

TEST_CASE("normalize_rows on a GPU divides rows by their sums and leaves zero rows alone", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(93, 0);
  Tensor x = test::random_tensor(rng, 400, 45, 0.0, 1.0);
  for (std::int64_t j = 0; j < 45; ++j) x.data()[7 * 45 + j] = 0.0f;  // row 7 sums to 0
  Tensor gpu = test::on_gpu(x);
  normalize_rows(gpu.view());
  normalize_rows(x.view());
  CHECK(test::difference(test::on_host(gpu).view(), test::to_dense(x.view()), 1e-6, 1e-7) == "");
  const Tensor back = test::on_host(gpu);
  for (std::int64_t j = 0; j < 45; ++j) CHECK(back.data()[7 * 45 + j] == 0.0f);
}

TEST_CASE("gelu_forward and gelu_backward on a GPU equal their CPU twins", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(33, 0);
  const Tensor x = test::random_tensor(rng, 2000, 24, -6.0, 6.0);
  const Tensor g = test::random_tensor(rng, 2000, 24);
  Tensor cpu_y = test::poisoned(2000, 24);
  gelu_forward(x.view(), cpu_y.view());
  Tensor gpu_y = Tensor::empty(2000, 24, Device::cuda());
  gelu_forward(test::on_gpu(x).view(), gpu_y.view());
  CHECK(test::difference(test::on_host(gpu_y).view(), test::to_dense(cpu_y.view()), 1e-6, 1e-6) == "");
  Tensor cpu_gx = test::poisoned(2000, 24);
  gelu_backward(x.view(), g.view(), cpu_gx.view());
  Tensor gpu_gx = Tensor::empty(2000, 24, Device::cuda());
  gelu_backward(test::on_gpu(x).view(), test::on_gpu(g).view(), gpu_gx.view());
  CHECK(test::difference(test::on_host(gpu_gx).view(), test::to_dense(cpu_gx.view()), 1e-6, 1e-6) == "");
}
