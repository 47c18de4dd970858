// Tests of train/detail/gradient_all_reduce.*: every parameter's gradient summed over
// the ranks and written back in place, through a host vector for a host communicator and, on a
// GPU with a communicator that moves GPU buffers, through one device buffer (no host copy).
#include "train/detail/gradient_all_reduce.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/elementwise.hpp"
#include "tests/support/gpu.hpp"
#include "train/layers/init.hpp"

using namespace halo;
using namespace halo::train;

namespace {

// One of two ranks whose partner holds `partner` times this rank's values: every float32
// all-reduce multiplies by 1 + partner. On a GPU the buffer is scaled by a GPU kernel, so it must
// be device memory; the calls on host and device memory are counted.
class ScalingRanks : public dist::Communicator {
 public:
  ScalingRanks(kernels::Device device, float partner) : device_(device), partner_(partner) {}
  int host_buffers = 0;
  int device_buffers = 0;
  std::int64_t reduced = 0;
  int rank() const override { return 0; }
  int size() const override { return 2; }
  kernels::Device device() const override { return device_; }
  void all_reduce(void* data, std::int64_t count, dist::DataType type) override {
    REQUIRE(type == dist::DataType::float32);
    reduced += count;
    bool on_device = false;
    if (device_.is_cuda()) {
      try {
        kernels::cuda::require_host_memory("all_reduce", "data", data, device_.index);
      } catch (const InvalidArgument&) {
        on_device = true;
      }
    }
    if (on_device) {
      ++device_buffers;
      const kernels::TensorView v{static_cast<float*>(data), 1, count, count, device_};
      kernels::axpby(partner_, v, 1.0f, v);
      return;
    }
    ++host_buffers;
    for (std::int64_t i = 0; i < count; ++i) static_cast<float*>(data)[i] *= 1.0f + partner_;
  }
  void all_to_all_v(const void*, const std::vector<std::int64_t>&, void*, const std::vector<std::int64_t>&,
                    dist::DataType) override {}
  void broadcast(void*, std::int64_t, dist::DataType, int) override {}
  void barrier() override {}

 private:
  kernels::Device device_;
  float partner_;
};

// Three parameters of different shapes (one empty) with random gradients on `device`; their
// gradient values, in order, in `values`.
std::vector<Parameter> random_parameters(kernels::Device device, std::vector<std::vector<float>>& values) {
  RandomStream rng(161, 0);
  std::vector<Parameter> params;
  params.push_back(make_parameter("w", 7, 3, device));
  params.push_back(make_parameter("e", 0, 4, device));
  params.push_back(make_parameter("b", 1, 5, device));
  for (Parameter& p : params) {
    std::vector<float> g(static_cast<std::size_t>(p.grad.numel()));
    for (float& v : g) v = static_cast<float>(rng.uniform() * 2.0 - 1.0);
    p.grad.copy_from(kernels::Tensor::from_vector(p.grad.rows(), p.grad.cols(), g).view());
    values.push_back(g);
  }
  return params;
}

void check_scaled(const std::vector<Parameter>& params, const std::vector<std::vector<float>>& values, float factor) {
  for (std::size_t k = 0; k < params.size(); ++k) {
    CAPTURE(params[k].name);
    const std::vector<float> got = params[k].grad.to_vector();
    REQUIRE(got.size() == values[k].size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == values[k][i] * factor);
  }
}

}  // namespace

TEST_CASE("all_reduce_gradients sums every gradient over the ranks through a host communicator", "[train]") {
  std::vector<std::vector<float>> values;
  std::vector<Parameter> params = random_parameters(kernels::Device::cpu(), values);
  ScalingRanks ranks(kernels::Device::cpu(), 3.0f);
  train::detail::all_reduce_gradients(ranks, {&params[0], &params[1], &params[2]});
  CHECK(ranks.host_buffers == 1);
  CHECK(ranks.reduced == 26);
  check_scaled(params, values, 4.0f);
}

TEST_CASE("all_reduce_gradients reduces GPU gradients in one device buffer when the communicator moves GPU buffers",
          "[train][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  std::vector<std::vector<float>> values;
  std::vector<Parameter> params = random_parameters(kernels::Device::cuda(), values);
  // Partners holding the same values: doubling is exact, so the check can ask for equality.
  ScalingRanks ranks(kernels::Device::cuda(), 1.0f);
  train::detail::all_reduce_gradients(ranks, {&params[0], &params[1], &params[2]});
  CHECK(ranks.device_buffers == 1);
  CHECK(ranks.host_buffers == 0);
  CHECK(ranks.reduced == 26);
  check_scaled(params, values, 2.0f);
  // A host communicator with GPU gradients still sums them, through the host.
  ScalingRanks host_ranks(kernels::Device::cpu(), 3.0f);
  train::detail::all_reduce_gradients(host_ranks, {&params[0], &params[1], &params[2]});
  CHECK(host_ranks.host_buffers == 1);
  check_scaled(params, values, 8.0f);
}
