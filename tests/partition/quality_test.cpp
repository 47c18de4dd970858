// Tests of partition/quality.*: the metrics of a hand-drawn partition, counted by hand.
#include "partition/quality.hpp"

#include <catch2/catch.hpp>

#include "tests/partition/partition_fixtures.hpp"

using namespace halo;
using namespace halo::partition;

TEST_CASE("evaluate_partition counts cut entries, halos, replication and balance", "[partition]") {
  // The 6-cycle 0-1-2-3-4-5-0 stored both ways, parts {0, 1}, {2, 3}, {4, 5}: the edges 1-2, 3-4
  // and 5-0 are cut (6 stored entries of 12), each part reads 2 halo vertices. Training vertices
  // 0, 2, 3: parts hold 1, 2, 0.
  datasets::Dataset ds = test::tiny_homogeneous(false, false, false, false);
  const std::vector<std::int32_t> a = {0, 1, 2, 3, 4, 5};
  const std::vector<std::int32_t> b = {1, 2, 3, 4, 5, 0};
  graph::CooToCsrOptions sym;
  sym.symmetrize = true;
  ds.graph = graph::csr_from_coo<std::int32_t>(6, 6, a.data(), b.data(), nullptr, 6, sym);
  ds.node_types[0].count = 6;
  ds.split.train = Array<std::int64_t>::from_vector({0, 2, 3});
  ds.split.valid = Array<std::int64_t>::from_vector({1});
  ds.split.test = Array<std::int64_t>::from_vector({4});
  const UnionGraph g = union_graph(ds);
  const Array<std::int32_t> parts = Array<std::int32_t>::from_vector({0, 0, 1, 1, 2, 2});
  const PartitionQuality q = evaluate_partition(g, global_train_ids(ds, g), parts, plan_halos(g, parts, 3));
  CHECK(q.num_parts == 3);
  CHECK(q.num_edges == 12);
  CHECK(q.edge_cut == 6);
  CHECK(q.edge_cut_fraction == Approx(0.5));
  CHECK(q.halo_total == 6);
  CHECK(q.replication_factor == Approx(2.0));
  REQUIRE(q.parts.size() == 3);
  for (const PartQuality& p : q.parts) {
    CHECK(p.owned == 2);
    CHECK(p.halo == 2);
    CHECK(p.edges == 4);
  }
  CHECK(q.parts[0].train == 1);
  CHECK(q.parts[1].train == 2);
  CHECK(q.parts[2].train == 0);
  CHECK(q.vertices.ratio() == Approx(1.0));
  CHECK(q.train.ratio() == Approx(2.0));
  CHECK(q.train.mean == Approx(1.0));
}

TEST_CASE("evaluate_partition of one part cuts nothing", "[partition]") {
  const datasets::Dataset ds = test::planted_sbm(300, 3, 0.7, 6);
  const UnionGraph g = union_graph(ds);
  Array<std::int32_t> parts = Array<std::int32_t>::vector(300);
  std::fill(parts.begin(), parts.end(), 0);
  const PartitionQuality q = evaluate_partition(g, global_train_ids(ds, g), parts, plan_halos(g, parts, 1));
  CHECK(q.edge_cut == 0);
  CHECK(q.halo_total == 0);
  CHECK(q.parts[0].edges == ds.graph.num_edges());
  CHECK(q.parts[0].train == ds.split.train.size());
  CHECK(q.replication_factor == 1.0);
}
