// GPU tests of kernels/cuda/bf16_rows.cu against the CPU twins: narrowing (with NaN, infinities,
// ties and subnormals), widening into a window over NaN, and ReLU's and ELU's backward from a
// bfloat16 output, bitwise.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <limits>

#include "graph/base/random.hpp"
#include "kernels/bf16_rows.hpp"
#include "kernels/elementwise.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

TEST_CASE("Bf16Rows narrowing, widening and ReLU's and ELU's backward on a GPU equal their CPU twins",
          "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(93, 0);
  Tensor x = test::random_tensor(rng, 515, 37, -3.0, 3.0);
  const float nan_value = std::numeric_limits<float>::quiet_NaN();
  const std::uint32_t specials[] = {0x3f808000u, 0x3f818000u, 0x00000001u, 0x7f7fffffu, 0x7f800000u, 0x7fc00001u};
  for (std::size_t k = 0; k < sizeof specials / sizeof specials[0]; ++k)
    std::memcpy(x.data() + 101 * k, &specials[k], sizeof(float));

  const Bf16Rows cpu_h = Bf16Rows::narrow(x.view());
  const Bf16Rows gpu_h = Bf16Rows::narrow(test::on_gpu(x).view());
  CHECK(gpu_h.device().is_cuda());
  Tensor cpu_wide = test::poisoned(515, 37);
  widen(cpu_h.view(), cpu_wide.view());
  Tensor gpu_wide = Tensor::full(515, 37, nan_value, Device::cuda());
  widen(gpu_h.view(), gpu_wide.view());
  CHECK(test::identical(test::on_host(gpu_wide).view(), cpu_wide.view()));

  Tensor y = test::random_tensor(rng, 515, 37);
  relu_forward(y.view(), y.view());
  const Bf16Rows cpu_y = Bf16Rows::narrow(y.view());
  const Bf16Rows gpu_y = Bf16Rows::narrow(test::on_gpu(y).view());
  const Tensor g = test::random_tensor(rng, 515, 37);
  Tensor cpu_gx = test::poisoned(515, 37);
  relu_backward(cpu_y.view(), g.view(), cpu_gx.view(), 1.25f);
  Tensor gpu_gx = test::on_gpu(g);
  relu_backward(gpu_y.view(), gpu_gx.view(), gpu_gx.view(), 1.25f);
  CHECK(test::identical(test::on_host(gpu_gx).view(), cpu_gx.view()));

  Tensor e = test::random_tensor(rng, 515, 37, -4.0, 4.0);
  elu_forward(e.view(), e.view());
  const Bf16Rows cpu_e = Bf16Rows::narrow(e.view());
  const Bf16Rows gpu_e = Bf16Rows::narrow(test::on_gpu(e).view());
  Tensor cpu_ge = test::poisoned(515, 37);
  elu_backward(cpu_e.view(), g.view(), cpu_ge.view());
  Tensor gpu_ge = test::on_gpu(g);
  elu_backward(gpu_e.view(), gpu_ge.view(), gpu_ge.view());
  CHECK(test::identical(test::on_host(gpu_ge).view(), cpu_ge.view()));
}
