// Tests of kernels/device.*: parsing device names and refusing unavailable devices clearly.
#include "kernels/device.hpp"

#include <catch2/catch.hpp>

#include "graph/base/error.hpp"

using namespace halo;
using namespace halo::kernels;

TEST_CASE("parse_device reads cpu, cuda and cuda:N and rejects anything else", "[kernels]") {
  CHECK(parse_device("cpu") == Device::cpu());
  CHECK(parse_device("cuda") == Device::cuda(0));
  CHECK(parse_device("cuda:3") == Device::cuda(3));
  CHECK(parse_device("cuda:3").to_string() == "cuda:3");
  CHECK_THROWS_WITH(parse_device("cuda:x"), Catch::Contains("unknown device 'cuda:x'"));
  CHECK_THROWS_AS(parse_device("tpu"), InvalidArgument);
  CHECK_THROWS_AS(parse_device("cuda:-1"), InvalidArgument);
}

TEST_CASE("require_device accepts the CPU and refuses GPUs that are not there", "[kernels]") {
  CHECK_NOTHROW(require_device(Device::cpu()));
  const int gpus = cuda_device_count();
  CHECK(gpus >= 0);
  CHECK_THROWS_AS(require_device(Device::cuda(gpus)), UnsupportedError);
  if (!built_with_cuda()) CHECK(gpus == 0);
}
