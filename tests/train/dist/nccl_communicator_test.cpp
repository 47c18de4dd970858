// Tests of train/dist/nccl_communicator.*: the DataType -> NCCL type mapping and the refusals
// (a bootstrap of GPU buffers, a GPU that is not there, a collective timeout that is not
// positive, a build without NCCL) on every machine; and, tagged [gpu] (skipped without a GPU or
// NCCL), a one-rank NcclCommunicator bootstrapped from a LocalCommunicator, whose collectives
// must give what the local one gives, on device and on host buffers, reading what kernels queued
// just before; a started all-to-all-v is ordered with halo's stream on both sides without the
// host; and its watchdog leaves a communicator whose collectives have run alone, however long it
// idles past the collective timeout. Several ranks: tests/mpi.
#include "train/dist/nccl_communicator.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/tensor.hpp"
#include "tests/support/gpu.hpp"
#include "tests/support/nccl.hpp"
#ifdef HALO_WITH_NCCL
#include "train/dist/detail/nccl_check.hpp"
#endif

using namespace halo::train::dist;
using halo::kernels::Device;
using halo::kernels::Tensor;

namespace {

// A host communicator claiming to move GPU buffers: not a bootstrap.
class GpuClaimingLocal : public LocalCommunicator {
 public:
  Device device() const override { return Device::cuda(); }
};

std::vector<float> random_floats(std::uint64_t seed, std::size_t n) {
  halo::RandomStream rng(seed, 0);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  return v;
}

}  // namespace

TEST_CASE("nccl_data_type maps each DataType to the NCCL type of its width and kind", "[train]") {
#ifdef HALO_WITH_NCCL
  CHECK(nccl_available());
  CHECK(detail::nccl_data_type(DataType::float32) == ncclFloat32);
  CHECK(detail::nccl_data_type(DataType::float64) == ncclFloat64);
  CHECK(detail::nccl_data_type(DataType::int64) == ncclInt64);
  CHECK_THROWS_AS(detail::nccl_data_type(static_cast<DataType>(7)), halo::InvalidArgument);
#else
  CHECK_FALSE(nccl_available());
  CHECK_THROWS_WITH(require_nccl(), Catch::Contains("-DHALO_WITH_NCCL=ON"));
#endif
}

TEST_CASE("NcclCommunicator refuses a bootstrap of GPU buffers, a GPU this machine does not have and a timeout of 0 s",
          "[train]") {
  LocalCommunicator local;
  GpuClaimingLocal claiming;
  if (!nccl_available()) {
    CHECK_THROWS_WITH(NcclCommunicator(local, Device::cuda()), Catch::Contains("no NCCL") &&
                                                                  Catch::Contains("-DHALO_WITH_NCCL=ON"));
    return;
  }
  CHECK_THROWS_WITH(NcclCommunicator(claiming, Device::cuda()),
                    Catch::Contains("bootstrap") && Catch::Contains("host buffers"));
  CHECK_THROWS_AS(NcclCommunicator(local, Device::cuda(64)), halo::UnsupportedError);
  CHECK_THROWS_WITH(NcclCommunicator(local, Device::cuda(64)), Catch::Contains("cuda:64"));
  CHECK_THROWS_WITH(NcclCommunicator(local, Device::cpu()), Catch::Contains("GPU buffers"));
  CHECK_THROWS_AS(NcclCommunicator(local, Device::cuda(), 0.0), halo::InvalidArgument);
  CHECK_THROWS_WITH(NcclCommunicator(local, Device::cuda(), -1.0), Catch::Contains("collective timeout"));
}

TEST_CASE("a one-rank NcclCommunicator gives the local communicator's results on device and host buffers",
          "[gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  HALO_SKIP_WITHOUT_NCCL();
  LocalCommunicator bootstrap;
  NcclCommunicator comm(bootstrap, Device::cuda());
  CHECK(comm.rank() == 0);
  CHECK(comm.size() == 1);
  CHECK(comm.device() == Device::cuda());
  const std::vector<float> values = random_floats(5, 1000);

  SECTION("all_reduce of device floats just written by a kernel, and of host doubles and int64") {
    // Tensor::full queues a fill kernel on halo's stream: the all-reduce must read its result.
    Tensor filled = Tensor::full(1, 4096, 2.5f, Device::cuda());
    comm.all_reduce(filled.data(), filled.numel(), DataType::float32);
    CHECK(filled.to_vector() == std::vector<float>(4096, 2.5f));
    Tensor device = Tensor::from_vector(1, 1000, values, Device::cuda());
    comm.all_reduce(device.data(), 1000, DataType::float32);
    CHECK(device.to_vector() == values);
    std::vector<double> doubles{1.5, -2.25, 1e300};
    comm.all_reduce(doubles.data(), 3, DataType::float64);
    CHECK(doubles == std::vector<double>{1.5, -2.25, 1e300});
    std::vector<std::int64_t> counts{std::int64_t{1} << 40, -3};
    comm.all_reduce(counts.data(), 2, DataType::int64);
    CHECK(counts == std::vector<std::int64_t>{std::int64_t{1} << 40, -3});
  }
  SECTION("all_to_all_v copies the rank's message to itself, whichever side is on the host") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Tensor send = Tensor::from_vector(1, 1000, values, Device::cuda());
    Tensor recv = Tensor::full(1, 1000, nan, Device::cuda());
    comm.all_to_all_v(send.data(), {1000}, recv.data(), {1000}, DataType::float32);
    CHECK(recv.to_vector() == values);
    std::vector<float> host_recv(1000, nan);
    comm.all_to_all_v(send.data(), {1000}, host_recv.data(), {1000}, DataType::float32);
    CHECK(host_recv == values);
    Tensor from_host = Tensor::full(1, 1000, nan, Device::cuda());
    comm.all_to_all_v(values.data(), {1000}, from_host.data(), {1000}, DataType::float32);
    CHECK(from_host.to_vector() == values);
    CHECK_NOTHROW(comm.all_to_all_v(nullptr, {0}, nullptr, {0}, DataType::float32));
    CHECK_THROWS_AS(comm.all_to_all_v(send.data(), {10, 0}, recv.data(), {10, 0}, DataType::float32),
                    halo::InvalidArgument);
    CHECK_THROWS_AS(comm.all_to_all_v(send.data(), {10}, recv.data(), {9}, DataType::float32), halo::InvalidArgument);
  }
  SECTION("a started all_to_all_v reads what halo's stream wrote before it; after finish, halo's stream reads it") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    constexpr std::int64_t n = std::int64_t{1} << 22;
    Tensor send = Tensor::full(1, n, 3.5f, Device::cuda());  // a fill kernel, queued
    Tensor recv = Tensor::full(1, n, nan, Device::cuda());
    std::unique_ptr<PendingAllToAll> pending =
        comm.start_all_to_all_v(send.data(), {n}, recv.data(), {n}, DataType::float32);
    Tensor meanwhile = Tensor::full(1, n, 1.0f, Device::cuda());  // runs while the message travels
    pending->finish();
    halo::kernels::axpby(2.0f, recv.view(), 0.0f, recv.view());  // queued on halo's stream after finish
    CHECK(recv.to_vector() == std::vector<float>(static_cast<std::size_t>(n), 7.0f));
    CHECK(meanwhile.to_vector().front() == 1.0f);
    std::vector<float> host_recv(1000, nan);
    comm.start_all_to_all_v(send.data(), {1000}, host_recv.data(), {1000}, DataType::float32)->finish();
    CHECK(host_recv == std::vector<float>(1000, 3.5f));
    Tensor from_host = Tensor::full(1, 1000, nan, Device::cuda());
    comm.start_all_to_all_v(values.data(), {1000}, from_host.data(), {1000}, DataType::float32)->finish();
    CHECK(from_host.to_vector() == values);
    Tensor dropped = Tensor::full(1, 1000, nan, Device::cuda());
    comm.start_all_to_all_v(send.data(), {1000}, dropped.data(), {1000}, DataType::float32).reset();
    CHECK_THROWS_AS(comm.start_all_to_all_v(send.data(), {10}, recv.data(), {9}, DataType::float32),
                    halo::InvalidArgument);
  }
  SECTION("broadcast from the root keeps its values; barrier returns") {
    Tensor device = Tensor::from_vector(1, 1000, values, Device::cuda());
    comm.broadcast(device.data(), 1000, DataType::float32, 0);
    CHECK(device.to_vector() == values);
    std::vector<std::int64_t> host{4, 5, 6};
    comm.broadcast(host.data(), 3, DataType::int64, 0);
    CHECK(host == std::vector<std::int64_t>{4, 5, 6});
    CHECK_THROWS_AS(comm.broadcast(host.data(), 3, DataType::int64, 1), halo::InvalidArgument);
    CHECK_NOTHROW(comm.barrier());
  }
}

TEST_CASE("a one-rank NcclCommunicator idle past its timeout after its collectives ran is not aborted by its watchdog",
          "[gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  HALO_SKIP_WITHOUT_NCCL();
  LocalCommunicator bootstrap;
  // The watchdog polls every 0.1 s: idling 1.5 s after the collectives spans 15 of its polls and
  // three timeouts.
  NcclCommunicator comm(bootstrap, Device::cuda(), 0.5);
  const std::vector<float> values = random_floats(6, 1000);
  Tensor device = Tensor::from_vector(1, 1000, values, Device::cuda());
  comm.all_reduce(device.data(), 1000, DataType::float32);
  std::unique_ptr<PendingAllToAll> pending =
      comm.start_all_to_all_v(values.data(), {1000}, device.data(), {1000}, DataType::float32);
  pending->finish();
  CHECK(device.to_vector() == values);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  CHECK_NOTHROW(comm.barrier());
  comm.all_reduce(device.data(), 1000, DataType::float32);
  CHECK(device.to_vector() == values);
}
