// GPU tests of kernels/cuda/dropout.cu: the mask and the output are bit-identical to the CPU
// twin's for every width (whole and partial blocks of 8 columns), probability, key and global id
// mapping; forward and backward agree; in place works; strided windows keep their padding.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/random.hpp"
#include "kernels/dropout.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {
constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();
}

TEST_CASE("dropout on a GPU gives the CPU twin's bits for every width, rate and key", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(101, 0);
  std::vector<std::int64_t> ids(700);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(5000000000LL + 977 * i);
  for (const std::int64_t f : {1, 7, 8, 13, 64, 100})
    for (const float p : {0.0f, 0.1f, 0.5f, 0.9f})
      for (const bool with_ids : {false, true}) {
        CAPTURE(f, p, with_ids);
        const DropoutKey key{42, 3, 2};
        const IndexView global{with_ids ? ids.data() : nullptr, with_ids ? 700 : 0};
        const Tensor x = test::random_tensor(rng, 700, f);
        Tensor cpu_y = test::poisoned(700, f);
        dropout_forward(x.view(), cpu_y.view(), p, key, global);
        Tensor gpu_y = Tensor::full(700, f, nan_value, Device::cuda());
        const Tensor xg = test::on_gpu(x);
        dropout_forward(xg.view(), gpu_y.view(), p, key, global);
        CHECK(test::identical(test::on_host(gpu_y).view(), cpu_y.view()));
        Tensor gpu_g = test::on_gpu(x);
        dropout_backward(gpu_g.view(), gpu_g.view(), p, key, global);
        CHECK(test::identical(test::on_host(gpu_g).view(), cpu_y.view()));
      }
  // Another key gives another mask.
  const Tensor x = Tensor::full(64, 64, 1.0f);
  Tensor a = Tensor::full(64, 64, nan_value, Device::cuda());
  Tensor b = Tensor::full(64, 64, nan_value, Device::cuda());
  const Tensor xg = test::on_gpu(x);
  dropout_forward(xg.view(), a.view(), 0.5f, {1, 1, 0}, {});
  dropout_forward(xg.view(), b.view(), 0.5f, {1, 2, 0}, {});
  CHECK_FALSE(test::identical(test::on_host(a).view(), test::on_host(b).view()));
}

TEST_CASE("dropout on a GPU writes strided windows without touching their padding", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(102, 0);
  const Tensor x = test::random_tensor(rng, 90, 21);
  const test::GpuStrided xs(x, 3, 1e30f);
  test::GpuStrided y(90, 21, 5, nan_value);
  dropout_forward(xs.view, y.view, 0.3f, {7, 0, 1}, {});
  Tensor cpu_y = test::poisoned(90, 21);
  dropout_forward(x.view(), cpu_y.view(), 0.3f, {7, 0, 1}, {});
  CHECK(test::identical(y.window().view(), cpu_y.view()));
  CHECK(y.padding_intact(nan_value));
}

TEST_CASE("dropout on a GPU keyed on a DeviceIndex gives the CPU twin's bits, forward and backward", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(103, 0);
  std::vector<std::int64_t> ids(300);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(7000000000LL + 31 * i);
  const DeviceIndex gpu_ids({ids.data(), 300}, std::numeric_limits<std::int64_t>::max(), Device::cuda(),
                            IndexUse::rows);
  const DeviceIndex cpu_ids({ids.data(), 300}, std::numeric_limits<std::int64_t>::max(), Device::cpu(),
                            IndexUse::rows);
  const DropoutKey key{9, 4, 1};
  const Tensor x = test::random_tensor(rng, 300, 19);
  Tensor cpu_y = test::poisoned(300, 19);
  dropout_forward(x.view(), cpu_y.view(), 0.4f, key, {ids.data(), 300});
  Tensor cpu_y2 = test::poisoned(300, 19);
  dropout_forward(x.view(), cpu_y2.view(), 0.4f, key, cpu_ids);
  CHECK(test::identical(cpu_y2.view(), cpu_y.view()));
  const Tensor xg = test::on_gpu(x);
  Tensor gpu_y = Tensor::full(300, 19, nan_value, Device::cuda());
  dropout_forward(xg.view(), gpu_y.view(), 0.4f, key, gpu_ids);
  CHECK(test::identical(test::on_host(gpu_y).view(), cpu_y.view()));
  Tensor gpu_g = Tensor::full(300, 19, nan_value, Device::cuda());
  dropout_backward(xg.view(), gpu_g.view(), 0.4f, key, gpu_ids);
  CHECK(test::identical(test::on_host(gpu_g).view(), cpu_y.view()));
}

TEST_CASE("bias_relu_dropout on a GPU gives the CPU twin's bits with and without bias, mask and ids",
          "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(103, 0);
  std::vector<std::int64_t> ids(500);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(7000000000LL + 313 * i);
  for (const std::int64_t f : {1, 9, 64, 100})
    for (const float p : {0.0f, 0.5f})
      for (const bool with_bias : {false, true})
        for (const bool with_ids : {false, true}) {
          CAPTURE(f, p, with_bias, with_ids);
          const DropoutKey key{11, 2, 1};
          const IndexView global{with_ids ? ids.data() : nullptr, with_ids ? 500 : 0};
          const Tensor y = test::random_tensor(rng, 500, f, -1.0, 1.0);
          const Tensor bias = test::random_tensor(rng, 1, f, -0.5, 0.5);
          Tensor cpu_y = y.clone();
          bias_relu_dropout(cpu_y.view(), with_bias ? bias.view() : ConstTensorView{}, p, key, global);
          test::GpuStrided gpu_y(y, 3, nan_value);
          const Tensor gpu_bias = test::on_gpu(bias);
          bias_relu_dropout(gpu_y.view, with_bias ? gpu_bias.view() : ConstTensorView{}, p, key, global);
          CHECK(test::identical(gpu_y.window().view(), cpu_y.view()));
          CHECK(gpu_y.padding_intact(nan_value));
        }
}
