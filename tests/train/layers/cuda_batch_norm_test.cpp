// GPU tests of train/layers/batch_norm.*: a BatchNorm on a GPU against the same layer on the CPU over
// several training steps and an evaluation (outputs, gradients, running statistics), and a
// BatchNorm whose communicator moves GPU buffers, whose sums must reach it in device memory.
#include "train/layers/batch_norm.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/elementwise.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/support/gpu.hpp"
#include "tests/train/gradient_check.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::Dense;

namespace {

// Pretends to be one of two ranks on GPU 0 holding identical parts of the graph: every all-reduce
// doubles. Float buffers are doubled by a GPU kernel, so they must be device memory (counted);
// the row count, a host integer, is doubled on the host.
class TwoIdenticalGpuRanks : public dist::Communicator {
 public:
  int device_buffers = 0;
  int host_buffers = 0;
  int rank() const override { return 0; }
  int size() const override { return 2; }
  kernels::Device device() const override { return kernels::Device::cuda(); }
  void all_reduce(void* data, std::int64_t count, dist::DataType type) override {
    if (type == dist::DataType::int64) {
      for (std::int64_t i = 0; i < count; ++i) static_cast<std::int64_t*>(data)[i] *= 2;
      return;
    }
    REQUIRE(type == dist::DataType::float32);
    try {
      kernels::cuda::require_host_memory("all_reduce", "data", data, 0);
      ++host_buffers;
      for (std::int64_t i = 0; i < count; ++i) static_cast<float*>(data)[i] *= 2.0f;
    } catch (const InvalidArgument&) {
      ++device_buffers;
      const kernels::TensorView v{static_cast<float*>(data), 1, count, count, kernels::Device::cuda()};
      kernels::axpby(1.0f, v, 1.0f, v);
    }
  }
  void all_to_all_v(const void*, const std::vector<std::int64_t>&, void*, const std::vector<std::int64_t>&,
                    dist::DataType) override {}
  void broadcast(void*, std::int64_t, dist::DataType, int) override {}
  void barrier() override {}
};

Dense on_host_dense(const kernels::Tensor& t) { return test::to_dense(t.to(kernels::Device::cpu())); }

}  // namespace

TEST_CASE("BatchNorm on a GPU trains and evaluates as on the CPU", "[train][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test::case_seed(151);
  RandomStream rng(seed, 1);
  const std::int64_t rows = 3000, features = 24;
  BatchNorm cpu(features, "bn0");
  BatchNorm gpu(features, "bn0", kernels::Device::cuda());
  Dense gamma = test::random_dense(rng, 1, features), beta = test::random_dense(rng, 1, features);
  for (BatchNorm* bn : std::vector<BatchNorm*>{&cpu, &gpu}) {
    bn->gamma().value.copy_from(test::to_tensor(gamma).view());
    bn->beta().value.copy_from(test::to_tensor(beta).view());
  }
  Step train_step;
  for (int pass = 0; pass < 3; ++pass) {
    CAPTURE(pass);
    Dense x = test::random_dense(rng, rows, features, 2.0);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < features; ++j) x.at(i, j) += 0.1 * static_cast<double>(j);
    Dense g = test::random_dense(rng, rows, features);
    const kernels::Tensor x_cpu = test::to_tensor(x);
    const kernels::Tensor x_gpu = x_cpu.to(kernels::Device::cuda());
    const kernels::Tensor y_cpu = cpu.forward(x_cpu, train_step);
    const kernels::Tensor y_gpu = gpu.forward(x_gpu, train_step);
    CHECK(test::max_relative_error(on_host_dense(y_gpu), test::to_dense(y_cpu), 1e-3) < 1e-5);
    kernels::Tensor g_cpu = test::to_tensor(g);
    kernels::Tensor g_gpu = g_cpu.to(kernels::Device::cuda());
    const kernels::Tensor gx_cpu = cpu.backward(std::move(g_cpu), train_step);
    const kernels::Tensor gx_gpu = gpu.backward(std::move(g_gpu), train_step);
    CHECK(test::max_relative_error(on_host_dense(gx_gpu), test::to_dense(gx_cpu), 1e-3) < 1e-5);
  }
  CHECK(test::max_relative_error(on_host_dense(gpu.gamma().grad), test::to_dense(cpu.gamma().grad), 1e-3) < 1e-5);
  CHECK(test::max_relative_error(on_host_dense(gpu.beta().grad), test::to_dense(cpu.beta().grad), 1e-3) < 1e-5);
  for (std::size_t b = 0; b < 2; ++b)
    CHECK(test::max_relative_error(on_host_dense(*gpu.buffers()[b].second), test::to_dense(*cpu.buffers()[b].second)) <
          1e-5);

  Step eval_step;
  eval_step.training = false;
  Dense x = test::random_dense(rng, 100, features);
  const kernels::Tensor y_cpu = cpu.forward(test::to_tensor(x), eval_step);
  const kernels::Tensor y_gpu = gpu.forward(test::to_tensor(x).to(kernels::Device::cuda()), eval_step);
  CHECK(test::max_relative_error(on_host_dense(y_gpu), test::to_dense(y_cpu), 1e-3) < 1e-5);
}

TEST_CASE("BatchNorm all-reduces its sums in device memory when the communicator moves GPU buffers",
          "[train][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test::case_seed(152);
  RandomStream rng(seed, 1);
  BatchNorm single(5, "bn0");
  TwoIdenticalGpuRanks ranks;
  BatchNorm doubled(5, "bn0", kernels::Device::cuda(), &ranks);
  Dense x = test::random_dense(rng, 40, 5);
  Dense g = test::random_dense(rng, 40, 5);
  const kernels::Tensor xt = test::to_tensor(x);
  // A layer keeps a view of its input for backward: the GPU copy must outlive it.
  const kernels::Tensor xt_gpu = xt.to(kernels::Device::cuda());
  Step step;
  const kernels::Tensor y1 = single.forward(xt, step);
  const kernels::Tensor y2 = doubled.forward(xt_gpu, step);
  CHECK(test::max_relative_error(on_host_dense(y2), test::to_dense(y1), 1e-3) < 1e-5);
  const kernels::Tensor gx1 = single.backward(test::to_tensor(g), step);
  const kernels::Tensor gx2 = doubled.backward(test::to_tensor(g).to(kernels::Device::cuda()), step);
  CHECK(ranks.device_buffers == 2);  // the sums in forward and in backward
  CHECK(ranks.host_buffers == 0);
  CHECK(test::max_relative_error(on_host_dense(gx2), test::to_dense(gx1), 1e-3) < 1e-5);
  CHECK(test::max_relative_error(on_host_dense(doubled.gamma().grad), test::to_dense(single.gamma().grad), 1e-3) <
        1e-5);
  // The running variance uses the global row count (80) for its unbiased correction.
  std::vector<double> mean, var;
  test::column_statistics(x, mean, var);
  Dense rv(1, 5);
  for (std::size_t j = 0; j < 5; ++j) rv.v[j] = 0.9 + 0.1 * var[j] * 80.0 / 79.0;
  CHECK(test::max_relative_error(on_host_dense(*doubled.buffers()[1].second), rv) < 1e-5);
}
