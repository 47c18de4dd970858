// Tests of partition/stream_partition.cpp: the one-pass Fennel partitioner keeps its vertex cap,
// cuts far fewer edges than random on a graph with communities, and ignores the thread count.
#include <omp.h>

#include <catch2/catch.hpp>

#include "partition/partitioner.hpp"
#include "partition/quality.hpp"
#include "tests/partition/partition_fixtures.hpp"

using namespace halo;
using namespace halo::partition;

namespace {

PartitionQuality quality_of(const datasets::Dataset& ds, const Array<std::int32_t>& parts, std::int32_t num_parts) {
  const UnionGraph g = union_graph(ds);
  return evaluate_partition(g, global_train_ids(ds, g), parts, plan_halos(g, parts, num_parts));
}

}  // namespace

TEST_CASE("The stream partitioner cuts fewer edges than random and keeps parts under the cap", "[partition]") {
  const datasets::Dataset ds = test::planted_sbm(6000, 4, 0.95, 12);
  for (std::int32_t p : {2, 4, 8}) {
    INFO("P = " << p);
    PartitionOptions o;
    o.method = Method::stream;
    o.num_parts = p;
    const PartitionInput input = build_partition_input(ds, o);
    CHECK(input.balance == std::vector<BalanceKey>{BalanceKey::vertices, BalanceKey::edges});
    const PartitionQuality q = quality_of(ds, stream_partition(input, o), p);
    const PartitionQuality random = quality_of(ds, random_partition(6000, p, 1), p);
    CAPTURE(q.edge_cut_fraction, random.edge_cut_fraction, q.edges.ratio());
    CHECK(q.edge_cut_fraction < 0.75 * random.edge_cut_fraction);
    for (const PartQuality& part : q.parts) CHECK(part.owned <= static_cast<std::int64_t>(1.03 * 6000 / p));
    CHECK(q.edges.ratio() < 1.2);
    // The edge term keeps edges within the tolerance, or at least closer than vertices alone.
    o.balance = {BalanceKey::vertices};
    const PartitionQuality vertices_only = quality_of(ds, stream_partition(build_partition_input(ds, o), o), p);
    CHECK(q.edges.ratio() <= std::max(1.035, vertices_only.edges.ratio()));
  }
}

TEST_CASE("The stream partitioner gives the same parts on one thread as on several", "[partition]") {
  const datasets::Dataset ds = test::planted_sbm(20000, 3, 0.8, 6);
  PartitionOptions o;
  o.method = Method::stream;
  o.num_parts = 3;
  const PartitionInput input = build_partition_input(ds, o);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<std::int32_t> one = stream_partition(input, o).to_vector();
  omp_set_num_threads(std::max(threads, 3));
  const std::vector<std::int32_t> many = stream_partition(input, o).to_vector();
  omp_set_num_threads(threads);
  CHECK(one == many);
}

TEST_CASE("The stream partitioner follows neighbours already placed", "[partition]") {
  // Two stars: hub 0 with leaves 2, 4, 6, ... and hub 1 with leaves 3, 5, 7, ...; streamed in id
  // order into two parts, the hubs land apart and every leaf joins its hub, cutting nothing.
  const std::int32_t n = 1000;
  datasets::Dataset ds = test::tiny_homogeneous(false, false, false, false);
  std::vector<std::int32_t> leaf, hub;
  for (std::int32_t v = 2; v < n; ++v) {
    leaf.push_back(v);
    hub.push_back(v % 2);
  }
  graph::CooToCsrOptions sym;
  sym.symmetrize = true;
  ds.graph = graph::csr_from_coo<std::int32_t>(n, n, leaf.data(), hub.data(), nullptr, n - 2, sym);
  ds.node_types[0].count = n;
  PartitionOptions o;
  o.method = Method::stream;
  o.num_parts = 2;
  o.balance = {BalanceKey::vertices};
  const Array<std::int32_t> parts = partition_vertices(build_partition_input(ds, o), o).parts;
  CHECK(parts[0] != parts[1]);
  std::int64_t with_hub = 0;
  for (std::int32_t v = 2; v < n; ++v) with_hub += parts[v] == parts[v % 2];
  CHECK(with_hub == n - 2);
}
