// HaloExchange across the ranks of the MPI world: halo rows receive their owners' rows, halo
// gradients come back added into their owners' rows, the traffic is what the partition says, and
// boundary sampling keeps the rows both ends agree on, scaled by 1 / rate. A started exchange
// finished after other work gives the blocking one's rows bit for bit, and HaloAggregation's
// overlapped products equal the blocking exchange around the unsplit products bit for bit; over
// NCCL ([gpu], one GPU per rank) both give the host's results.
#include "train/dist/halo_exchange.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "datasets/synth.hpp"
#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "kernels/spmm.hpp"
#include "kernels/tensor.hpp"
#include "partition/partition_dir.hpp"
#include "sampling/boundary_sampler.hpp"
#include "tests/mpi/mpi_world.hpp"
#include "tests/support/tensor_compare.hpp"
#include "train/dist/halo_aggregation.hpp"
#include "train/dist/nccl_communicator.hpp"
#include "train/dist/rank_gpu.hpp"

using namespace halo;
using kernels::Tensor;
using test::rows_of;
using test::same_bits;
using train::dist::HaloAggregation;
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

// num_local x w: the owned rows random, from a stream keyed by the global vertex (so the same on
// every rank count), the halo rows `halo_value`.
Tensor vertex_rows(const partition::LocalGraph& g, std::int64_t w, std::uint64_t seed, float halo_value) {
  std::vector<float> v(static_cast<std::size_t>(g.num_local() * w), halo_value);
  for (std::int64_t r = 0; r < g.num_owned; ++r) {
    RandomStream rng(seed, static_cast<std::uint64_t>(g.local_to_global[r]));
    for (std::int64_t c = 0; c < w; ++c)
      v[static_cast<std::size_t>(r * w + c)] = static_cast<float>(rng.uniform() - 0.5);
  }
  return Tensor::from_vector(g.num_local(), w, v);
}

// The part's local CSR with weights that depend only on the global ids of the edge's ends.
graph::CsrGraph weighted_operator(const partition::LocalGraph& g) {
  const graph::CsrGraph& a = g.graph();
  auto weights = Array<float>::vector(a.num_edges());
  graph::visit(a, [&](const auto& v) {
    for (std::int64_t r = 0; r < v.num_rows; ++r)
      for (std::int64_t p = v.indptr[r]; p < v.indptr[r + 1]; ++p) {
        const auto key = static_cast<std::uint64_t>(g.local_to_global[r] * 1000003 + g.local_to_global[v.indices[p]]);
        weights[p] = static_cast<float>(0.05 + RandomStream(17, key).uniform());
      }
  });
  return a.clone().with_weights(std::move(weights));
}


double max_relative_error(const Tensor& got, const Tensor& want) {
  const std::vector<float> a = got.to_vector();
  const std::vector<float> b = want.to_vector();
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double scale = std::max(1.0, std::abs(static_cast<double>(b[i])));
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])) / scale);
  }
  return worst;
}

std::string exchange_partition() {
  datasets::SbmOptions o;
  o.nodes = 600;
  o.avg_degree = 6;
  o.features = 4;
  o.seed = 5;
  return test::partition_for_world(datasets::generate_sbm(o), "exchange");
}

}  // namespace

TEST_CASE("HaloExchange moves owned rows into the peers' halo rows and halo gradients back to their owners",
          "[mpi]") {
  const std::string dir = exchange_partition();
  SECTION("every halo row") { check_exchange(dir, 1.0); }
  SECTION("the halo rows boundary sampling keeps, scaled") { check_exchange(dir, 0.5); }
}

TEST_CASE("A started exchange finished after other work gives the blocking exchange's rows bit for bit", "[mpi]") {
  train::dist::Communicator& world = test::mpi_world();
  const std::string dir = exchange_partition();
  const partition::Part part = partition::read_part(dir, world.rank());
  const partition::LocalGraph& g = part.graph;
  const double rate = GENERATE(1.0, 0.5);
  CAPTURE(rate);
  constexpr std::int64_t w = 6;
  HaloExchange exchange(g, world);
  const sampling::BoundarySampler sampler(rate, 11);
  exchange.sample(&sampler, 3);

  const Tensor x = vertex_rows(g, w, 1, std::numeric_limits<float>::quiet_NaN());
  Tensor blocking = x.clone();
  exchange.forward(blocking.view());
  Tensor started = x.clone();
  exchange.begin_forward(started.view());
  Tensor work = Tensor::empty(g.num_owned, w);  // what the caller computes meanwhile
  kernels::copy(started.view().slice_rows(0, g.num_owned), work.view());
  exchange.finish_forward();
  CHECK(same_bits(started, blocking));

  // Backward: the owned rows are rewritten while the gradients travel, and the gradients received
  // are added onto what they hold at the finish.
  const Tensor grad = vertex_rows(g, w, 2, 0.25f);
  const Tensor owned_later = rows_of(vertex_rows(g, w, 3, 0.0f), 0, g.num_owned);
  Tensor blocking_grad = grad.clone();
  kernels::copy(owned_later.view(), blocking_grad.view().slice_rows(0, g.num_owned));
  exchange.backward(blocking_grad.view());
  Tensor started_grad = grad.clone();
  exchange.begin_backward(started_grad.view());
  kernels::copy(owned_later.view(), started_grad.view().slice_rows(0, g.num_owned));
  exchange.finish_backward();
  CHECK(same_bits(started_grad, blocking_grad));
  CHECK(exchange.stats().exchanges == 4);
}

TEST_CASE("HaloAggregation's overlapped products equal the blocking exchange around the unsplit products bit for bit",
          "[mpi]") {
  train::dist::Communicator& world = test::mpi_world();
  const std::string dir = exchange_partition();
  const partition::Part part = partition::read_part(dir, world.rank());
  const partition::LocalGraph& g = part.graph;
  const double rate = GENERATE(1.0, 0.5);
  CAPTURE(rate);
  constexpr std::int64_t w = 5;
  const graph::CsrGraph a = weighted_operator(g);
  HaloExchange exchange(g, world);
  const sampling::BoundarySampler sampler(rate, 11);
  exchange.sample(&sampler, 4);
  HaloAggregation aggregation(a.clone(), exchange);

  const Tensor x = rows_of(vertex_rows(g, w, 5, 0.0f), 0, g.num_owned);
  Tensor extended = vertex_rows(g, w, 5, std::numeric_limits<float>::quiet_NaN());
  exchange.forward(extended.view());
  Tensor want = Tensor::empty(g.num_owned, w);
  kernels::spmm(a, extended.view(), want.view());
  CHECK(same_bits(aggregation.forward(x), want));

  const Tensor grad = rows_of(vertex_rows(g, w, 6, 0.0f), 0, g.num_owned);
  Tensor full = Tensor::empty(g.num_local(), w);
  kernels::spmm(graph::transpose(a), grad.view(), full.view());
  exchange.backward(full.view());
  CHECK(same_bits(aggregation.backward(grad), rows_of(full, 0, g.num_owned)));
}

TEST_CASE("Over NCCL the started halo exchange and the overlapped products give the host's results", "[gpu]") {
  train::dist::Communicator& world = test::mpi_world();
  const std::string dir = exchange_partition();
  const int visible = kernels::cuda_device_count();
  if (!train::dist::nccl_available() || visible < world.size()) {
    WARN("skipped: needs NCCL and one GPU per rank (" << visible << " visible, " << world.size() << " ranks)");
    return;
  }
  const kernels::Device gpu =
      kernels::Device::cuda(train::dist::gpu_of_local_rank(train::dist::local_rank(world), visible));
  train::dist::NcclCommunicator nccl(world, gpu);
  const partition::Part part = partition::read_part(dir, world.rank());
  const partition::LocalGraph& g = part.graph;
  constexpr std::int64_t w = 8;
  HaloExchange on_host(g, world);
  HaloExchange on_gpu(g, nccl);

  // Rows move unchanged, and the gradients received are added in the same order on both.
  const Tensor x = vertex_rows(g, w, 7, std::numeric_limits<float>::quiet_NaN());
  Tensor host_x = x.clone();
  on_host.forward(host_x.view());
  Tensor gpu_x = x.to(gpu);
  on_gpu.begin_forward(gpu_x.view());
  Tensor work = Tensor::full(g.num_owned, w, 1.0f, gpu);  // a kernel queued while the rows travel
  on_gpu.finish_forward();
  CHECK(gpu_x.to_vector() == host_x.to_vector());
  const Tensor grad = vertex_rows(g, w, 8, 0.5f);
  Tensor host_grad = grad.clone();
  on_host.backward(host_grad.view());
  Tensor gpu_grad = grad.to(gpu);
  on_gpu.begin_backward(gpu_grad.view());
  on_gpu.finish_backward();
  CHECK(gpu_grad.to_vector() == host_grad.to_vector());

  // The overlapped products on the GPU against the host's.
  const graph::CsrGraph a = weighted_operator(g);
  HaloAggregation host_aggregation(a.clone(), on_host);
  HaloAggregation gpu_aggregation(a.clone(), on_gpu, gpu);
  const Tensor owned = rows_of(vertex_rows(g, w, 9, 0.0f), 0, g.num_owned);
  CHECK(max_relative_error(gpu_aggregation.forward(owned.to(gpu)), host_aggregation.forward(owned)) < 1e-5);
  CHECK(max_relative_error(gpu_aggregation.backward(owned.to(gpu)), host_aggregation.backward(owned)) < 1e-5);
}
