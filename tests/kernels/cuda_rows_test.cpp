// GPU tests of kernels/cuda/rows.cu: gather and scatter-add against the naive reference and the
// CPU twin (scatter-add adds in the CPU's order, so the bits match), with repeated targets,
// NaN-poisoned outputs, strided windows, and the refusal of bad and device-resident indices.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "kernels/rows.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {
constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();

std::vector<std::int64_t> random_index(RandomStream& rng, std::int64_t n, std::int64_t limit) {
  std::vector<std::int64_t> index(static_cast<std::size_t>(n));
  for (auto& i : index) i = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(limit)));
  return index;
}
}  // namespace

TEST_CASE("gather_rows on a GPU picks the indexed rows", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(81, 0);
  for (const std::int64_t f : {1, 5, 64, 130}) {
    CAPTURE(f);
    const Tensor src = test::random_tensor(rng, 300, f);
    const std::vector<std::int64_t> index = random_index(rng, 1000, 300);
    Tensor out = Tensor::full(1000, f, nan_value, Device::cuda());
    gather_rows(test::on_gpu(src).view(), {index.data(), 1000}, out.view());
    CHECK(test::difference(test::on_host(out).view(), test::naive_gather_rows(test::to_dense(src.view()), index), 0,
                           0) == "");
  }
  const Tensor src = test::random_tensor(rng, 20, 6);
  const std::vector<std::int64_t> index{3, 19, 0, 3};
  const test::GpuStrided xs(src, 3, 1e30f);
  test::GpuStrided out(4, 6, 2, nan_value);
  gather_rows(xs.view, {index.data(), 4}, out.view);
  CHECK(test::difference(out.window().view(), test::naive_gather_rows(test::to_dense(src.view()), index), 0, 0) == "");
  CHECK(out.padding_intact(nan_value));
}

TEST_CASE("scatter_add_rows on a GPU adds in the CPU twin's order, bit for bit", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(82, 0);
  for (const std::int64_t f : {1, 7, 64}) {
    CAPTURE(f);
    const Tensor src = test::random_tensor(rng, 2000, f);
    // 2000 sources into 150 targets: every target hit many times, some not at all.
    const std::vector<std::int64_t> index = random_index(rng, 2000, 150);
    const Tensor start = test::random_tensor(rng, 180, f);
    Tensor gpu_out = test::on_gpu(start);
    scatter_add_rows(test::on_gpu(src).view(), {index.data(), 2000}, gpu_out.view());
    Tensor cpu_out = start.clone();
    scatter_add_rows(src.view(), {index.data(), 2000}, cpu_out.view());
    CHECK(test::identical(test::on_host(gpu_out).view(), cpu_out.view()));
    CHECK(
        test::difference(test::on_host(gpu_out).view(),
                         test::naive_scatter_add_rows(test::to_dense(src.view()), index, test::to_dense(start.view())),
                         1e-5, 1e-5) == "");
  }
}

TEST_CASE("gather_rows and scatter_add_rows on a GPU refuse out-of-range and device-resident indices",
          "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const Tensor src = Tensor::zeros(4, 3, Device::cuda());
  Tensor out = Tensor::zeros(2, 3, Device::cuda());
  const std::vector<std::int64_t> bad{1, 4};
  CHECK_THROWS_WITH(gather_rows(src.view(), {bad.data(), 2}, out.view()),
                    Catch::Contains("index[1] = 4 is outside [0, 4)"));
  Tensor target = Tensor::zeros(3, 3, Device::cuda());
  const Tensor two = Tensor::zeros(2, 3, Device::cuda());
  CHECK_THROWS_WITH(scatter_add_rows(two.view(), {bad.data(), 2}, target.view()),
                    Catch::Contains("index[1] = 4 is outside [0, 3)"));
  // Index arrays are host memory; device memory (here a tensor's bytes) is refused, not read.
  const Tensor on_device = Tensor::zeros(1, 4, Device::cuda());
  const auto* device_index = reinterpret_cast<const std::int64_t*>(on_device.data());
  CHECK_THROWS_WITH(gather_rows(src.view(), {device_index, 2}, out.view()), Catch::Contains("must be host memory"));
  CHECK_THROWS_AS(scatter_add_rows(two.view(), {device_index, 2}, target.view()), InvalidArgument);
}

TEST_CASE("gather_rows and scatter_add_rows on a GPU reuse a DeviceIndex and never read the caller's array again",
          "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(83, 0);
  const std::int64_t f = 33;
  const Tensor src = test::random_tensor(rng, 500, f);
  std::vector<std::int64_t> index = random_index(rng, 500, 120);
  const std::vector<std::int64_t> kept = index;
  const DeviceIndex device_index({index.data(), 500}, 120, Device::cuda(), IndexUse::scatter);
  // Changing the caller's array afterwards cannot reach the copies the index holds.
  for (auto& i : index) i = 0;
  const Tensor start = test::random_tensor(rng, 120, f);
  Tensor gpu_out = test::on_gpu(start);
  const Tensor gpu_src = test::on_gpu(src);
  Tensor cpu_out = start.clone();
  for (int call = 0; call < 3; ++call) {
    scatter_add_rows(gpu_src.view(), device_index, gpu_out.view());
    scatter_add_rows(src.view(), {kept.data(), 500}, cpu_out.view());
  }
  CHECK(test::identical(test::on_host(gpu_out).view(), cpu_out.view()));
  Tensor gathered = Tensor::full(500, f, nan_value, Device::cuda());
  gather_rows(test::on_gpu(start).view(), device_index, gathered.view());
  CHECK(test::difference(test::on_host(gathered).view(), test::naive_gather_rows(test::to_dense(start.view()), kept),
                         0, 0) == "");
  // An index for fewer rows than the tensor has is fine; one for more, or on another device, is refused.
  const DeviceIndex host_index({kept.data(), 500}, 120, Device::cpu(), IndexUse::rows);
  CHECK_THROWS_AS(gather_rows(test::on_gpu(start).view(), host_index, gathered.view()), InvalidArgument);
  const DeviceIndex rows_only({kept.data(), 500}, 120, Device::cuda(), IndexUse::rows);
  CHECK_THROWS_WITH(scatter_add_rows(gpu_src.view(), rows_only, gpu_out.view()), Catch::Contains("IndexUse::scatter"));
  CHECK_THROWS_WITH(DeviceIndex({kept.data(), 500}, 100, Device::cuda(), IndexUse::scatter, "halo"),
                    Catch::Contains("halo: index["));
}
