// Tests of train/dist/communicator.hpp and local_communicator.cpp: a started all-to-all-v of the
// one-rank world lands in finish(), not before, and not at all when the handle is dropped
// unfinished; a communicator with only the blocking all-to-all-v is started through it.
#include "train/dist/communicator.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "graph/base/error.hpp"

using namespace halo;
using namespace halo::train::dist;

namespace {

bool all_nan(const std::vector<double>& v) {
  for (const double x : v)
    if (!std::isnan(x)) return false;
  return true;
}

// Two ranks whose blocking all_to_all_v hands rank 0 the values rank 1 would send: each
// received element is 100 + its position. Counts the calls.
class BlockingOnly : public Communicator {
 public:
  int blocking_calls = 0;
  int rank() const override { return 0; }
  int size() const override { return 2; }
  kernels::Device device() const override { return kernels::Device::cpu(); }
  void all_reduce(void*, std::int64_t, DataType) override {}
  void all_to_all_v(const void*, const std::vector<std::int64_t>&, void* recv,
                    const std::vector<std::int64_t>& recv_counts, DataType) override {
    ++blocking_calls;
    for (std::int64_t i = 0; i < recv_counts[0] + recv_counts[1]; ++i)
      static_cast<double*>(recv)[i] = 100.0 + static_cast<double>(i);
  }
  void broadcast(void*, std::int64_t, DataType, int) override {}
  void barrier() override {}
};

}  // namespace

TEST_CASE("LocalCommunicator's started all_to_all_v copies the message in finish, not before", "[train]") {
  LocalCommunicator local;
  const std::vector<double> send{1.5, -2.0, 3.25, 1e300};
  std::vector<double> recv(4, std::nan(""));
  std::unique_ptr<PendingAllToAll> pending = local.start_all_to_all_v(send.data(), {4}, recv.data(), {4},
                                                                      DataType::float64);
  CHECK(all_nan(recv));
  pending->finish();
  CHECK(recv == send);

  SECTION("a handle dropped unfinished leaves the receive buffer alone") {
    std::vector<double> untouched(4, std::nan(""));
    local.start_all_to_all_v(send.data(), {4}, untouched.data(), {4}, DataType::float64).reset();
    CHECK(all_nan(untouched));
  }
  SECTION("the blocking all_to_all_v is the start and the finish in a row") {
    std::vector<double> blocking(4, std::nan(""));
    local.all_to_all_v(send.data(), {4}, blocking.data(), {4}, DataType::float64);
    CHECK(blocking == send);
  }
  SECTION("counts that do not describe a one-rank exchange are refused when it starts") {
    CHECK_THROWS_AS(local.start_all_to_all_v(send.data(), {4, 0}, recv.data(), {4, 0}, DataType::float64),
                    InvalidArgument);
    CHECK_THROWS_WITH(local.start_all_to_all_v(send.data(), {4}, recv.data(), {3}, DataType::float64),
                      Catch::Contains("4 sent") && Catch::Contains("3 received"));
    CHECK_THROWS_AS(local.start_all_to_all_v(send.data(), {-1}, recv.data(), {-1}, DataType::float64),
                    InvalidArgument);
    CHECK_NOTHROW(local.start_all_to_all_v(nullptr, {0}, nullptr, {0}, DataType::float32)->finish());
  }
}

TEST_CASE("A communicator with only a blocking all_to_all_v is started through it, and finish does nothing more",
          "[train]") {
  BlockingOnly comm;
  const std::vector<double> send{1.0, 2.0, 3.0};
  std::vector<double> recv(5, std::nan(""));
  std::unique_ptr<PendingAllToAll> pending = comm.start_all_to_all_v(send.data(), {1, 2}, recv.data(), {2, 3},
                                                                     DataType::float64);
  CHECK(comm.blocking_calls == 1);
  CHECK(recv == std::vector<double>{100.0, 101.0, 102.0, 103.0, 104.0});
  recv.assign(5, 0.0);
  pending->finish();
  CHECK(comm.blocking_calls == 1);
  CHECK(recv == std::vector<double>(5, 0.0));
}
