// Tests of partition/local_graph.*: the local numbering on a hand-drawn graph, and on generated
// and real graphs that every method's parts reassemble into exactly the original graph with send
// lists matching the peers' halo lists, for P = 1, 2, 3, 4, 8.
#include "partition/local_graph.hpp"

#include <catch2/catch.hpp>

#include "partition/partitioner.hpp"
#include "tests/partition/partition_fixtures.hpp"
#include "tests/support/skip.hpp"

using namespace halo;
using namespace halo::partition;

namespace {

// The 6-cycle 0-1-2-3-4-5-0 stored both ways, cut into parts {0, 1}, {2, 3}, {4, 5}:
//
//    part 0       part 1       part 2
//    0 --- 1 ---- 2 --- 3 ---- 4 --- 5
//    |_______________________________|
datasets::Dataset six_cycle() {
  datasets::Dataset ds = test::tiny_homogeneous(false, false, false, false);
  const std::vector<std::int32_t> src = {0, 1, 2, 3, 4, 5};
  const std::vector<std::int32_t> dst = {1, 2, 3, 4, 5, 0};
  graph::CooToCsrOptions o;
  o.symmetrize = true;
  ds.graph = graph::csr_from_coo<std::int32_t>(6, 6, dst.data(), src.data(), nullptr, 6, o);
  ds.node_types[0].count = 6;
  ds.split.train = Array<std::int64_t>::from_vector({0, 2, 3});
  ds.split.valid = Array<std::int64_t>::from_vector({1});
  ds.split.test = Array<std::int64_t>::from_vector({4});
  return ds;
}

template <class T>
std::vector<T> values(const Array<T>& a) {
  return a.to_vector();
}

std::vector<std::int64_t> columns(const graph::CsrGraph& g) {
  return graph::visit(g, [](auto v) { return std::vector<std::int64_t>(v.indices, v.indices + v.num_edges); });
}

// Partitions `ds` with every method into each P of {1, 2, 3, 4, 8} not above its vertex count, and
// checks the parts.
void check_every_method_and_part_count(const datasets::Dataset& ds) {
  const UnionGraph g = union_graph(ds);
  for (Method method : {Method::metis, Method::stream, Method::random}) {
    for (std::int32_t p : {1, 2, 3, 4, 8}) {
      if (p > g.num_vertices) continue;
      INFO("method " << to_string(method) << ", P = " << p);
      PartitionOptions o;
      o.method = method;
      o.num_parts = p;
      const PartitionResult result = partition_vertices(build_partition_input(ds, o), o);
      test::check_reassembles(g, result.parts, test::build_all_parts(g, result.parts, p));
    }
  }
}

}  // namespace

TEST_CASE("build_local_graph numbers owned vertices first, then halo vertices by owner", "[partition]") {
  const datasets::Dataset ds = six_cycle();
  const UnionGraph g = union_graph(ds);
  const Array<std::int32_t> parts = Array<std::int32_t>::from_vector({0, 0, 1, 1, 2, 2});
  const HaloPlan plan = plan_halos(g, parts, 3);
  CHECK(plan.halo_total() == 6);
  const LocalGraph p0 = build_local_graph(g, parts, plan, 0);
  CHECK(p0.num_owned == 2);
  CHECK(p0.num_halo == 2);
  CHECK(values(p0.local_to_global) == std::vector<std::int64_t>{0, 1, 2, 5});
  CHECK(values(p0.halo_owner) == std::vector<std::int32_t>{1, 2});
  CHECK(values(p0.halo_remote_row) == std::vector<std::int64_t>{0, 1});
  CHECK(values(p0.recv_offsets) == std::vector<std::int64_t>{0, 0, 1, 2});
  // Part 1 reads vertex 1 (row 1 here), part 2 reads vertex 0 (row 0).
  CHECK(values(p0.send_offsets) == std::vector<std::int64_t>{0, 0, 1, 2});
  CHECK(values(p0.send_rows) == std::vector<std::int64_t>{1, 0});
  // Row 0 (vertex 0) reads 1 and 5; row 1 (vertex 1) reads 0 and 2.
  CHECK(values(p0.graph().indptr()) == std::vector<std::int64_t>{0, 2, 4});
  CHECK(columns(p0.graph()) == std::vector<std::int64_t>{1, 3, 0, 2});
  CHECK(p0.graph().num_cols() == 4);

  const LocalGraph p2 = build_local_graph(g, parts, plan, 2);
  CHECK(values(p2.local_to_global) == std::vector<std::int64_t>{4, 5, 0, 3});
  CHECK(values(p2.halo_owner) == std::vector<std::int32_t>{0, 1});
  CHECK(values(p2.halo_remote_row) == std::vector<std::int64_t>{0, 1});
  CHECK(columns(p2.graph()) == std::vector<std::int64_t>{1, 3, 0, 2});
  CHECK(p2.owned_type_offsets == std::vector<std::int64_t>{0, 2});
  CHECK(p2.vertex_type.empty());
}

TEST_CASE("plan_halos names the first vertex whose part id is out of range", "[partition]") {
  const datasets::Dataset ds = six_cycle();
  const Array<std::int32_t> parts = Array<std::int32_t>::from_vector({0, 0, 1, 3, 2, 2});
  CHECK_THROWS_WITH(plan_halos(union_graph(ds), parts, 3), Catch::Contains("vertex 3 is in part 3, expected 0..2"));
}

TEST_CASE("Parts of a hand-drawn directed weighted graph reassemble into it", "[partition]") {
  check_every_method_and_part_count(test::tiny_homogeneous());
}

TEST_CASE("Parts of a generated SBM graph reassemble into it and their send lists match the halos", "[partition]") {
  check_every_method_and_part_count(test::planted_sbm(700, 4, 0.8, 8));
}

TEST_CASE("Parts of a directed multigraph keep its self loops, repeated edges and weights", "[partition]") {
  check_every_method_and_part_count(test::directed_multigraph(300, 1500, 11));
}

TEST_CASE("Parts of a heterogeneous graph cover every vertex type and every relation", "[partition]") {
  const datasets::Dataset ds = test::tiny_hetero();
  check_every_method_and_part_count(ds);
  // Global ids: papers 0..2, authors 3..4; every local vertex knows its type.
  const UnionGraph g = union_graph(ds);
  const Array<std::int32_t> parts = Array<std::int32_t>::from_vector({1, 0, 1, 0, 1});
  const std::vector<LocalGraph> locals = test::build_all_parts(g, parts, 2);
  // Part 0 owns paper 1 and author 0; paper 1 cites paper 2 (part 1), written by author 0.
  CHECK(values(locals[0].local_to_global) == std::vector<std::int64_t>{1, 3, 2});
  CHECK(values(locals[0].vertex_type) == std::vector<std::int32_t>{0, 1, 0});
  CHECK(locals[0].owned_type_offsets == std::vector<std::int64_t>{0, 1, 2});
  CHECK(locals[1].owned_type_offsets == std::vector<std::int64_t>{0, 2, 3});
  CHECK_THROWS_AS(locals[0].graph(), InvalidArgument);
}

TEST_CASE("Parts of cora reassemble into it for every method and P", "[partition]") {
  const datasets::Dataset* cora = test::shared_dataset("cora");
  if (cora == nullptr) {
    HALO_SKIP("../shared/datasets is absent");
  }
  check_every_method_and_part_count(*cora);
}

TEST_CASE("Parts of acm (heterogeneous) reassemble into it for every method and P", "[partition]") {
  const datasets::Dataset* acm = test::shared_dataset("acm");
  if (acm == nullptr) {
    HALO_SKIP("../shared/datasets is absent");
  }
  check_every_method_and_part_count(*acm);
}
