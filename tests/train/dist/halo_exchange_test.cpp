// Tests of train/dist/halo_exchange.* in one process, with rank 1 of a two-part partition played
// by the test (tests/train/scripted_peer.hpp): a started forward exchange fills the halo rows when
// it finishes, with the peer's rows (every one, or the sampled ones); a started backward adds the
// returned gradients onto what the owned rows hold at the finish; one exchange at a time. Across
// real ranks: tests/mpi/halo_exchange_mpi_test.cpp.
#include "train/dist/halo_exchange.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "partition/partition_dir.hpp"
#include "sampling/boundary_sampler.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/write_partition.hpp"
#include "tests/train/scripted_peer.hpp"
#include "tests/train/trainer_fixture.hpp"

using namespace halo;
using train::dist::HaloExchange;
using kernels::Tensor;

namespace {

std::vector<float> random_floats(std::uint64_t seed, std::int64_t n) {
  RandomStream rng(seed, 0);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  return v;
}

// Part 0 of a random two-part partition of the small SBM graph.
partition::Part part_zero(const test::ScratchDir& scratch) {
  return partition::read_part(test::write_random_partition(test::small_sbm(), scratch, 2), 0, {true});
}

}  // namespace

TEST_CASE("A started forward exchange fills the halo rows with the peer's rows when it finishes", "[train]") {
  test::ScratchDir scratch;
  const partition::Part part = part_zero(scratch);
  const partition::LocalGraph& g = part.graph;
  REQUIRE(g.num_halo > 0);
  REQUIRE(g.send_rows.size() > 0);
  constexpr std::int64_t w = 5;
  test::ScriptedPeer peer;
  HaloExchange exchange(g, peer);
  const std::vector<float> values = random_floats(1, g.num_local() * w);
  Tensor x = Tensor::from_vector(g.num_local(), w, values);

  SECTION("every halo row") {
    peer.from_peer = random_floats(2, g.num_halo * w);
    exchange.begin_forward(x.view());
    CHECK(exchange.in_flight());
    CHECK(peer.started == 1);
    CHECK(peer.finished == 0);
    exchange.finish_forward();
    CHECK_FALSE(exchange.in_flight());
    const std::vector<float> out = x.to_vector();
    const auto owned = static_cast<std::size_t>(g.num_owned * w);
    CHECK(std::vector<float>(out.begin(), out.begin() + owned) ==
          std::vector<float>(values.begin(), values.begin() + owned));
    CHECK(std::vector<float>(out.begin() + owned, out.end()) == peer.from_peer);
    // The message to the peer: the owned rows it reads, in its halo order.
    std::vector<float> expected;
    for (const std::int64_t r : g.send_rows)
      expected.insert(expected.end(), values.begin() + r * w, values.begin() + (r + 1) * w);
    CHECK(peer.to_peer == expected);
    CHECK(peer.send_unchanged);
    CHECK(exchange.stats().exchanges == 1);
    CHECK(exchange.stats().bytes_sent == g.send_rows.size() * w * 4);
    CHECK(exchange.stats().bytes_received == g.num_halo * w * 4);
    CHECK(exchange.stats().wait_seconds <= exchange.stats().seconds);
  }
  SECTION("the halo rows the sampler keeps; the dropped ones read as zero") {
    const sampling::BoundarySampler sampler(0.5, 11);
    exchange.sample(&sampler, 3);
    REQUIRE(exchange.rows_received() > 0);
    REQUIRE(exchange.rows_received() < g.num_halo);
    peer.from_peer = random_floats(3, exchange.rows_received() * w);
    exchange.begin_forward(x.view());
    exchange.finish_forward();
    const std::vector<float> out = x.to_vector();
    std::int64_t next = 0;
    std::int64_t wrong = 0;
    for (std::int64_t h = 0; h < g.num_halo; ++h) {
      const bool kept = sampler.keep(3, 0, g.local_to_global[g.num_owned + h]);
      for (std::int64_t c = 0; c < w; ++c) {
        const float want = kept ? peer.from_peer[static_cast<std::size_t>(next * w + c)] : 0.0f;
        if (out[static_cast<std::size_t>((g.num_owned + h) * w + c)] != want) ++wrong;
      }
      next += kept ? 1 : 0;
    }
    CHECK(next == exchange.rows_received());
    CHECK(wrong == 0);
    // The peer's rows arrive scaled by their sender; this rank scales what it sends.
    REQUIRE(peer.to_peer.size() == static_cast<std::size_t>(exchange.rows_sent() * w));
    std::int64_t i = 0;
    wrong = 0;
    for (const std::int64_t r : g.send_rows) {
      if (!sampler.keep(3, 1, g.local_to_global[r])) continue;
      for (std::int64_t c = 0; c < w; ++c)
        if (peer.to_peer[static_cast<std::size_t>(i * w + c)] != values[static_cast<std::size_t>(r * w + c)] * 2.0f)
          ++wrong;
      ++i;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("A started backward exchange adds the returned gradients onto what the owned rows hold when it finishes",
          "[train]") {
  test::ScratchDir scratch;
  const partition::Part part = part_zero(scratch);
  const partition::LocalGraph& g = part.graph;
  constexpr std::int64_t w = 3;
  test::ScriptedPeer peer;
  HaloExchange exchange(g, peer);
  const std::vector<float> before = random_floats(4, g.num_local() * w);
  Tensor grad = Tensor::from_vector(g.num_local(), w, before);
  peer.from_peer = random_floats(5, g.send_rows.size() * w);
  exchange.begin_backward(grad.view());
  // What a caller does meanwhile: it writes the owned rows (HaloAggregation computes them).
  const std::vector<float> owned_later = random_floats(6, g.num_owned * w);
  kernels::copy(Tensor::from_vector(g.num_owned, w, owned_later).view(), grad.view().slice_rows(0, g.num_owned));
  exchange.finish_backward();
  CHECK(peer.send_unchanged);
  // The message: this rank's halo rows, as they were.
  CHECK(peer.to_peer == std::vector<float>(before.begin() + g.num_owned * w, before.end()));
  std::vector<float> expected = owned_later;
  for (std::int64_t i = 0; i < g.send_rows.size(); ++i)
    for (std::int64_t c = 0; c < w; ++c)
      expected[static_cast<std::size_t>(g.send_rows[i] * w + c)] += peer.from_peer[static_cast<std::size_t>(i * w + c)];
  expected.insert(expected.end(), before.begin() + g.num_owned * w, before.end());
  CHECK(grad.to_vector() == expected);
  CHECK(exchange.stats().bytes_sent == g.num_halo * w * 4);
}

TEST_CASE("HaloExchange runs one exchange at a time and refuses a finish of another direction", "[train]") {
  test::ScratchDir scratch;
  const partition::Part part = part_zero(scratch);
  const partition::LocalGraph& g = part.graph;
  test::ScriptedPeer peer;
  HaloExchange exchange(g, peer);
  Tensor x = Tensor::zeros(g.num_local(), 2);
  CHECK_THROWS_WITH(exchange.finish_forward(), Catch::Contains("finish_forward") && Catch::Contains("none"));
  peer.from_peer.assign(static_cast<std::size_t>(g.num_halo * 2), 1.0f);
  exchange.begin_forward(x.view());
  CHECK_THROWS_WITH(exchange.begin_forward(x.view()), Catch::Contains("already in flight"));
  CHECK_THROWS_WITH(exchange.begin_backward(x.view()), Catch::Contains("already in flight"));
  CHECK_THROWS_WITH(exchange.finish_backward(), Catch::Contains("forward") && Catch::Contains("expected backward"));
  CHECK_THROWS_WITH(exchange.use_full_halo(), Catch::Contains("in flight"));
  CHECK(exchange.in_flight());

  SECTION("finish_forward completes it") {
    exchange.finish_forward();
    CHECK(peer.finished == 1);
  }
  SECTION("abandon drops it: nothing is unpacked, and the next exchange runs") {
    exchange.abandon();
    CHECK_FALSE(exchange.in_flight());
    CHECK(peer.finished == 0);
    CHECK(exchange.stats().exchanges == 0);
    exchange.forward(x.view());
    CHECK(peer.finished == 1);
    CHECK(x.to_vector().back() == 1.0f);
  }
}

TEST_CASE("HaloExchange over a one-rank world moves nothing, started or not", "[train]") {
  test::ScratchDir scratch;
  const partition::Part part =
      partition::read_part(test::write_random_partition(test::small_sbm(), scratch, 1), 0, {true});
  train::dist::LocalCommunicator local;
  HaloExchange exchange(part.graph, local);
  REQUIRE(exchange.num_halo() == 0);
  const std::vector<float> values = random_floats(7, exchange.num_local() * 4);
  Tensor x = Tensor::from_vector(exchange.num_local(), 4, values);
  exchange.begin_forward(x.view());
  exchange.finish_forward();
  exchange.begin_backward(x.view());
  exchange.finish_backward();
  CHECK(x.to_vector() == values);
  CHECK(exchange.stats().exchanges == 2);
  CHECK(exchange.stats().bytes_sent == 0);
}
