// Tests of train/dist/halo_aggregation.* in one process, with rank 1 of a two-part partition played
// by the test (tests/train/scripted_peer.hpp): the overlapped products (interior rows while the
// halo rows travel, boundary rows after; the transpose's halo rows before the reverse exchange,
// its owned rows during it) give, bit for bit, the unsplit product over the peer's rows, and never
// change a row while it is being sent. Across real ranks: tests/mpi/halo_exchange_mpi_test.cpp;
// on a GPU: tests/train/cuda_distributed_training_test.cpp.
#include "train/dist/halo_aggregation.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "kernels/spmm.hpp"
#include "partition/partition_dir.hpp"
#include "tests/support/tensor_compare.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/write_partition.hpp"
#include "tests/train/scripted_peer.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/dist/halo_exchange.hpp"

using namespace halo;
using kernels::Tensor;
using test::same_bits;
using train::dist::HaloAggregation;
using train::dist::HaloExchange;

namespace {

std::vector<float> random_floats(std::uint64_t seed, std::int64_t n) {
  RandomStream rng(seed, 0);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  return v;
}

// The part's local CSR with random positive weights (a normalised operator's kind of values).
graph::CsrGraph weighted_operator(const partition::LocalGraph& g, std::uint64_t seed) {
  RandomStream rng(seed, 0);
  auto weights = Array<float>::vector(g.graph().num_edges());
  for (float& x : weights) x = static_cast<float>(0.05 + rng.uniform());
  return g.graph().clone().with_weights(std::move(weights));
}


}  // namespace

TEST_CASE("HaloAggregation's overlapped forward and backward equal the unsplit products bit for bit", "[train]") {
  test::ScratchDir scratch;
  const partition::Part part =
      partition::read_part(test::write_random_partition(test::small_sbm(), scratch, 2), 0, {true});
  const partition::LocalGraph& g = part.graph;
  const graph::CsrGraph a = weighted_operator(g, 8);
  test::ScriptedPeer peer;
  HaloExchange exchange(g, peer);
  HaloAggregation aggregation(a.clone(), exchange);
  const std::int64_t w = GENERATE(1, 7, 16, 33);
  CAPTURE(w);

  // Forward: the unsplit product over the owned rows and the rows the peer sends.
  const std::vector<float> x = random_floats(9, g.num_owned * w);
  peer.from_peer = random_floats(10, g.num_halo * w);
  std::vector<float> extended = x;
  extended.insert(extended.end(), peer.from_peer.begin(), peer.from_peer.end());
  Tensor want = Tensor::empty(g.num_owned, w);
  kernels::spmm(a, Tensor::from_vector(g.num_local(), w, extended).view(), want.view());
  const Tensor y = aggregation.forward(Tensor::from_vector(g.num_owned, w, x));
  CHECK(same_bits(y.to_vector(), want.to_vector()));
  CHECK(peer.send_unchanged);

  // Backward: Aᵀ · g, its halo rows sent to the peer as they are, the peer's gradients added
  // onto the owned rows in the order of the send list.
  const std::vector<float> grad = random_floats(11, g.num_owned * w);
  peer.from_peer = random_floats(12, g.send_rows.size() * w);
  Tensor full = Tensor::empty(g.num_local(), w);
  kernels::spmm(graph::transpose(a), Tensor::from_vector(g.num_owned, w, grad).view(), full.view());
  const std::vector<float> product = full.to_vector();
  std::vector<float> expected(product.begin(), product.begin() + g.num_owned * w);
  for (std::int64_t i = 0; i < g.send_rows.size(); ++i)
    for (std::int64_t c = 0; c < w; ++c)
      expected[static_cast<std::size_t>(g.send_rows[i] * w + c)] += peer.from_peer[static_cast<std::size_t>(i * w + c)];
  const Tensor gx = aggregation.backward(Tensor::from_vector(g.num_owned, w, grad));
  CHECK(same_bits(gx.to_vector(), expected));
  CHECK(same_bits(peer.to_peer, std::vector<float>(product.begin() + g.num_owned * w, product.end())));
  CHECK(peer.send_unchanged);
  CHECK(peer.finished == 2);
  CHECK_FALSE(exchange.in_flight());
}

TEST_CASE("HaloAggregation on one part is the plain product and its transpose, bit for bit", "[train]") {
  test::ScratchDir scratch;
  const partition::Part part =
      partition::read_part(test::write_random_partition(test::small_sbm(), scratch, 1), 0, {true});
  const graph::CsrGraph a = weighted_operator(part.graph, 13);
  train::dist::LocalCommunicator local;
  HaloExchange exchange(part.graph, local);
  HaloAggregation aggregation(a.clone(), exchange);
  const std::int64_t n = part.graph.num_owned;
  const Tensor x = Tensor::from_vector(n, 6, random_floats(14, n * 6));
  Tensor want = Tensor::empty(n, 6);
  kernels::spmm(a, x.view(), want.view());
  CHECK(same_bits(aggregation.forward(x).to_vector(), want.to_vector()));
  kernels::spmm(graph::transpose(a), x.view(), want.view());
  CHECK(same_bits(aggregation.backward(x).to_vector(), want.to_vector()));
  CHECK_THROWS_WITH(aggregation.forward(Tensor::zeros(n + 1, 6)), Catch::Contains("owns"));
}
