// HaloExchange across the ranks of the MPI world: halo rows receive their owners' rows, halo
// gradients come back added into their owners' rows, the traffic is what the partition says, and
// boundary sampling keeps the rows both ends agree on, scaled by 1 / rate.
#include "train/dist/halo_exchange.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "datasets/synth.hpp"
#include "partition/partition_dir.hpp"
#include "sampling/boundary_sampler.hpp"
#include "tests/mpi/mpi_world.hpp"

using namespace halo;
using train::dist::HaloExchange;

namespace {

constexpr std::int64_t width = 3;

// A value no other (vertex, column) has, exact in float.
float value_of(std::int64_t global, std::int64_t col) { return static_cast<float>(global * width + col + 1); }

// For every global vertex, the ranks whose halo holds it (read from every part's numbering).
std::map<std::int64_t, std::vector<int>> halo_holders(const std::string& dir, int parts) {
  std::map<std::int64_t, std::vector<int>> holders;
  for (int q = 0; q < parts; ++q) {
    const partition::Part part = partition::read_part(dir, q);
    for (std::int64_t h = part.graph.num_owned; h < part.graph.num_local(); ++h)
      holders[part.graph.local_to_global[h]].push_back(q);
  }
  return holders;
}

// Runs one forward and one backward exchange, with the sampler of `rate` in epoch 3, and checks
// both against what the partition and the sampler say.
void check_exchange(const std::string& dir, double rate) {
  train::dist::Communicator& world = test::mpi_world();
  const int me = world.rank();
  const partition::Part part = partition::read_part(dir, me);
  const partition::LocalGraph& g = part.graph;
  HaloExchange exchange(g, world);
  const sampling::BoundarySampler sampler(rate, 11);
  exchange.sample(&sampler, 3);
  const float scale = sampler.scale();

  kernels::Tensor x = kernels::Tensor::full(g.num_local(), width, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> host(static_cast<std::size_t>(g.num_local() * width), std::numeric_limits<float>::quiet_NaN());
  for (std::int64_t r = 0; r < g.num_owned; ++r)
    for (std::int64_t c = 0; c < width; ++c) host[static_cast<std::size_t>(r * width + c)] = value_of(g.local_to_global[r], c);
  x.copy_from(kernels::Tensor::from_vector(g.num_local(), width, host).view());
  exchange.forward(x.view());
  const std::vector<float> out = x.to_vector();
  std::int64_t wrong = 0;
  for (std::int64_t h = g.num_owned; h < g.num_local(); ++h) {
    const std::int64_t global = g.local_to_global[h];
    const bool kept = sampler.keep(3, me, global);
    for (std::int64_t c = 0; c < width; ++c) {
      const float expected = kept ? value_of(global, c) * scale : 0.0f;
      if (out[static_cast<std::size_t>(h * width + c)] != expected) ++wrong;
    }
  }
  CHECK(wrong == 0);

  // Backward: owned rows hold their own value, halo row of rank q holds (q + 1) * (col + 1).
  std::vector<float> grad(static_cast<std::size_t>(g.num_local() * width));
  for (std::int64_t r = 0; r < g.num_local(); ++r)
    for (std::int64_t c = 0; c < width; ++c)
      grad[static_cast<std::size_t>(r * width + c)] =
          r < g.num_owned ? value_of(g.local_to_global[r], c) : static_cast<float>((me + 1) * (c + 1));
  kernels::Tensor gt = kernels::Tensor::from_vector(g.num_local(), width, grad);
  exchange.backward(gt.view());
  const std::vector<float> back = gt.to_vector();
  const auto holders = halo_holders(dir, world.size());
  wrong = 0;
  for (std::int64_t r = 0; r < g.num_local(); ++r) {
    const std::int64_t global = g.local_to_global[r];
    for (std::int64_t c = 0; c < width; ++c) {
      double expected = grad[static_cast<std::size_t>(r * width + c)];
      if (r < g.num_owned && holders.count(global) > 0)
        for (const int q : holders.at(global))
          if (sampler.keep(3, q, global)) expected += static_cast<double>(scale) * (q + 1) * (c + 1);
      if (std::abs(back[static_cast<std::size_t>(r * width + c)] - expected) > 1e-6 * std::abs(expected)) ++wrong;
    }
  }
  CHECK(wrong == 0);

  // Traffic: what this rank sends equals what the rows it sends weigh, and over all ranks the
  // forward and the backward each move every kept halo row once.
  const std::int64_t row_bytes = width * static_cast<std::int64_t>(sizeof(float));
  CHECK(exchange.stats().bytes_sent == (exchange.rows_sent() + exchange.rows_received()) * row_bytes);
  CHECK(exchange.stats().exchanges == 2);
  const std::int64_t total_sent = train::dist::all_reduce_value(world, exchange.stats().bytes_sent);
  const std::int64_t total_received = train::dist::all_reduce_value(world, exchange.stats().bytes_received);
  std::int64_t kept_rows = 0;
  for (const auto& [global, ranks] : holders)
    for (const int q : ranks) kept_rows += sampler.keep(3, q, global) ? 1 : 0;
  CHECK(total_sent == 2 * kept_rows * row_bytes);
  CHECK(total_received == total_sent);
  if (rate == 1.0) CHECK(kept_rows == partition::read_partition_info(dir).quality.halo_total);
}

}  // namespace

TEST_CASE("HaloExchange moves owned rows into the peers' halo rows and halo gradients back to their owners",
          "[mpi]") {
  datasets::SbmOptions o;
  o.nodes = 600;
  o.avg_degree = 6;
  o.features = 4;
  o.seed = 5;
  const std::string dir = test::partition_for_world(datasets::generate_sbm(o), "exchange");
  SECTION("every halo row") { check_exchange(dir, 1.0); }
  SECTION("the halo rows boundary sampling keeps, scaled") { check_exchange(dir, 0.5); }
}
