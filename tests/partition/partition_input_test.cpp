// Tests of partition/partition_input.cpp: the undirected simple graph and the vertex weights the
// partitioners read, compared with graphs drawn by hand.
#include <catch2/catch.hpp>

#include "graph/base/log.hpp"
#include "partition/partitioner.hpp"
#include "tests/partition/partition_fixtures.hpp"

using namespace halo;
using namespace halo::partition;

namespace {

std::vector<std::vector<std::int64_t>> rows_of(const graph::CsrGraph& g) {
  std::vector<std::vector<std::int64_t>> rows(static_cast<std::size_t>(g.num_rows()));
  graph::visit(g, [&](auto v) {
    for (std::int64_t i = 0; i < v.num_rows; ++i)
      for (std::int64_t k = v.indptr[i]; k < v.indptr[i + 1]; ++k) rows[static_cast<std::size_t>(i)].push_back(v.indices[k]);
  });
  return rows;
}

using Rows = std::vector<std::vector<std::int64_t>>;

}  // namespace

TEST_CASE("build_partition_input symmetrises a directed graph and drops loops and repeats", "[partition]") {
  // tiny_homogeneous: 0->1, 1->2, 2->0, 3->2 (rows: 0:{2} 1:{0} 2:{1,3} 3:{}), plus a self loop
  // on 3 and a repeated 1->2:
  //   undirected: 0-1, 1-2, 0-2, 2-3
  datasets::Dataset ds = test::tiny_homogeneous();
  ds.graph = graph::CsrGraph(4, 4, Array<std::int64_t>::from_vector({0, 1, 2, 5, 6}),
                             Array<std::int32_t>::from_vector({2, 0, 1, 1, 3, 3}));
  PartitionOptions o;
  o.num_parts = 2;
  o.balance = {BalanceKey::vertices, BalanceKey::edges, BalanceKey::train};
  const PartitionInput input = build_partition_input(ds, o);
  CHECK(input.num_vertices == 4);
  CHECK(rows_of(input.graph) == Rows{{1, 2}, {0, 2}, {0, 1, 3}, {2}});
  CHECK(input.graph.properties().symmetric);
  CHECK(input.graph.properties().sorted);
  CHECK(input.balance == o.balance);
  // Weights per vertex: 1, stored in-degree, training (train = {0, 2}).
  CHECK(input.weights.to_vector() == std::vector<std::int64_t>{1, 1, 1, 1, 1, 0, 1, 3, 1, 1, 1, 0});
}

TEST_CASE("build_partition_input cleans a symmetric graph and checks its claim", "[partition]") {
  // The star 0-1, 0-2, 0-3 with a self loop on 1 and the edge 0-2 stored twice each way.
  datasets::Dataset ds = test::tiny_homogeneous(false, false);
  graph::CsrProperties claims;
  claims.sorted = true;
  claims.symmetric = true;
  ds.graph = graph::CsrGraph(4, 4, Array<std::int64_t>::from_vector({0, 4, 6, 8, 9}),
                             Array<std::int32_t>::from_vector({1, 2, 2, 3, 0, 1, 0, 0, 0}), Array<float>(), claims);
  PartitionOptions o;
  o.num_parts = 2;
  std::vector<std::string> warnings;
  set_log_sink([&](LogLevel, const std::string& m) { warnings.push_back(m); }, LogLevel::warning);
  CHECK(rows_of(build_partition_input(ds, o).graph) == Rows{{1, 2, 3}, {0}, {0}, {0}});
  CHECK(warnings.empty());

  // The same claim on a graph that is not symmetric (3 -> 0 has no mirror): symmetrised instead.
  ds.graph = graph::CsrGraph(4, 4, Array<std::int64_t>::from_vector({0, 2, 3, 4, 5}),
                             Array<std::int32_t>::from_vector({1, 2, 0, 0, 0}), Array<float>(), claims);
  CHECK(rows_of(build_partition_input(ds, o).graph) == Rows{{1, 2, 3}, {0}, {0}, {0}});
  set_log_sink(nullptr);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("claims to be symmetric and sorted but is not"));
}

TEST_CASE("build_partition_input joins every relation of a heterogeneous graph in global ids", "[partition]") {
  // Papers 0..2, authors 3..4: writes a0-p0, a0-p1, a1-p2; cites p1-p0, p2-p0, p2-p1.
  const datasets::Dataset ds = test::tiny_hetero();
  PartitionOptions o;
  o.num_parts = 2;
  o.method = Method::stream;
  const PartitionInput input = build_partition_input(ds, o);
  CHECK(rows_of(input.graph) == Rows{{1, 2, 3}, {0, 2, 3}, {0, 1, 4}, {0, 1}, {2}});
  // Stored in-degrees: papers 3, 2, 1 (authors have no rows).
  CHECK(input.weights.to_vector() == std::vector<std::int64_t>{1, 3, 1, 2, 1, 1, 1, 0, 1, 0});
}

TEST_CASE("build_partition_input drops a balance key whose weights are all zero", "[partition]") {
  datasets::Dataset ds = test::tiny_homogeneous();
  ds.split.train = Array<std::int64_t>::vector(0);
  PartitionOptions o;
  o.num_parts = 2;
  o.balance = {BalanceKey::train, BalanceKey::vertices};
  const PartitionInput input = build_partition_input(ds, o);
  CHECK(input.balance == std::vector<BalanceKey>{BalanceKey::vertices});
  CHECK(input.weights.cols() == 1);
}

TEST_CASE("build_partition_input for the random method skips the graph", "[partition]") {
  PartitionOptions o;
  o.method = Method::random;
  o.num_parts = 3;
  const PartitionInput input = build_partition_input(test::tiny_homogeneous(), o);
  CHECK(input.graph.num_rows() == 0);
  o.num_parts = 5;
  CHECK_THROWS_WITH(build_partition_input(test::tiny_homogeneous(), o),
                    Catch::Contains("cannot cut 4 vertices into 5 parts"));
}
