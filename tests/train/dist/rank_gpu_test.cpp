// Tests of train/dist/rank_gpu.*: local ranks group the ranks of a machine in rank order, a
// machine's ranks take its GPUs in turn, and the NCCL device check makes its one collective on
// every rank, failing or not, so that a failure is agreed instead of leaving a peer waiting.
#include "train/dist/rank_gpu.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "tests/support/gpu.hpp"
#include "train/dist/nccl_communicator.hpp"

using namespace halo::train::dist;
using halo::kernels::Device;

namespace {

// Rank `rank` of a two-rank world whose peer's contribution to each all-reduce is `peer` (int64
// values, added as the sum would); counts the all-reduces, the only collective expected.
class ScriptedPeer : public Communicator {
 public:
  ScriptedPeer(int rank, std::vector<std::int64_t> peer) : rank_(rank), peer_(std::move(peer)) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  Device device() const override { return Device::cpu(); }
  void all_reduce(void* data, std::int64_t count, DataType type) override {
    ++all_reduces;
    REQUIRE(type == DataType::int64);
    REQUIRE(count == static_cast<std::int64_t>(peer_.size()));
    auto* values = static_cast<std::int64_t*>(data);
    for (std::size_t i = 0; i < peer_.size(); ++i) values[i] += peer_[i];
  }
  void all_to_all_v(const void*, const std::vector<std::int64_t>&, void*, const std::vector<std::int64_t>&,
                    DataType) override {
    FAIL("unexpected all_to_all_v");
  }
  void broadcast(void*, std::int64_t, DataType, int) override { FAIL("unexpected broadcast"); }
  void barrier() override { FAIL("unexpected barrier"); }

  int all_reduces = 0;

 private:
  int rank_;
  std::vector<std::int64_t> peer_;
};

bool can_drive_gpu_over_nccl() { return nccl_available() && halo::test::gpu_available(); }

}  // namespace

TEST_CASE("local_rank_of numbers the ranks of each machine from 0 in rank order", "[train]") {
  // Hosts 7, 9, 7, 7, 9, 4: ranks 0, 2, 3 share one machine, ranks 1, 4 another, rank 5 is alone.
  const std::vector<std::int64_t> hand{7, 9, 7, 7, 9, 4};
  std::vector<int> got;
  for (int r = 0; r < 6; ++r) got.push_back(local_rank_of(hand, r));
  CHECK(got == std::vector<int>{0, 0, 1, 2, 1, 0});
  // Random worlds: on every machine, its ranks in rank order are numbered 0, 1, 2, ...
  halo::RandomStream rng(11, 0);
  for (int trial = 0; trial < 20; ++trial) {
    const int p = 1 + static_cast<int>(rng.below(40));
    std::vector<std::int64_t> keys;
    for (int r = 0; r < p; ++r) keys.push_back(static_cast<std::int64_t>(rng.below(5)));
    std::map<std::int64_t, int> next;
    for (int r = 0; r < p; ++r) CHECK(local_rank_of(keys, r) == next[keys[static_cast<std::size_t>(r)]]++);
  }
  CHECK_THROWS_AS(local_rank_of(hand, 6), halo::InvalidArgument);
  CHECK_THROWS_AS(local_rank_of(hand, -1), halo::InvalidArgument);
}

TEST_CASE("gpu_of_local_rank gives a machine's ranks its GPUs in turn", "[train]") {
  std::vector<int> got;
  for (int local = 0; local < 5; ++local) got.push_back(gpu_of_local_rank(local, 2));
  CHECK(got == std::vector<int>{0, 1, 0, 1, 0});
  CHECK(gpu_of_local_rank(3, 8) == 3);
  CHECK(gpu_of_local_rank(3, 0) == 0);  // no GPU: the device check says so
  CHECK_THROWS_AS(gpu_of_local_rank(-1, 2), halo::InvalidArgument);
}

TEST_CASE("local_rank counts the lower ranks on this machine from every rank's host key", "[train]") {
  CHECK(host_key() == host_key());
  LocalCommunicator alone;
  CHECK(local_rank(alone) == 0);
  // Rank 1 of two: local rank 1 when rank 0 runs on this machine, 0 when it runs elsewhere.
  ScriptedPeer same(1, {host_key(), 0});
  CHECK(local_rank(same) == 1);
  CHECK(same.all_reduces == 1);
  ScriptedPeer elsewhere(1, {host_key() + 1, 0});
  CHECK(local_rank(elsewhere) == 0);
}

TEST_CASE("require_nccl_device makes its one collective on every rank and agrees on a failure", "[train]") {
  SECTION("a rank that cannot use its device reports its own reason after the collective") {
    ScriptedPeer world(0, {0, 0});
    CHECK_THROWS_WITH(require_nccl_device(world, Device::cpu()),
                      Catch::Contains(nccl_available() ? "GPU buffers; got device cpu" : "-DHALO_WITH_NCCL=ON"));
    CHECK(world.all_reduces == 1);
    ScriptedPeer again(0, {0, 0});
    CHECK_THROWS_WITH(require_nccl_device(again, Device::cuda(64)),
                      Catch::Contains(nccl_available() ? "cuda:64" : "-DHALO_WITH_NCCL=ON"));
    CHECK(again.all_reduces == 1);
  }
  SECTION("a rank that could use its device stops when a peer cannot, naming it") {
    ScriptedPeer world(0, {0, 1});
    if (can_drive_gpu_over_nccl()) {
      CHECK_THROWS_WITH(require_nccl_device(world, Device::cuda(0)),
                        Catch::Contains("rank(s) 1 cannot") && Catch::Contains("rank 0 stops"));
    } else {
      // Here this rank fails itself (no NCCL or no GPU): its own reason wins.
      CHECK_THROWS_AS(require_nccl_device(world, Device::cuda(0)), halo::UnsupportedError);
    }
    CHECK(world.all_reduces == 1);
  }
  SECTION("a world where every rank can passes") {
    ScriptedPeer world(0, {0, 0});
    if (can_drive_gpu_over_nccl())
      CHECK_NOTHROW(require_nccl_device(world, Device::cuda(0)));
    else
      CHECK_THROWS_WITH(require_nccl_device(world, Device::cuda(0)),
                        Catch::Contains("NCCL") || Catch::Contains("no CUDA GPU") || Catch::Contains("without CUDA"));
    CHECK(world.all_reduces == 1);
  }
}
