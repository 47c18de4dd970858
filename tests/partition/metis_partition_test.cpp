// Tests of partition/metis_partition.cpp: METIS recovers a planted partition, honours its seed,
// balances extra constraints, and graphs past its 32-bit indices are refused with the numbers.
#include <catch2/catch.hpp>

#include "partition/partitioner.hpp"
#include "partition/quality.hpp"
#include "tests/partition/partition_fixtures.hpp"

using namespace halo;
using namespace halo::partition;

namespace {

// Fraction of stored entries joining two different communities (the SBM's labels).
double planted_cut_fraction(const datasets::Dataset& ds) {
  const Array<std::int64_t>& label = ds.target().labels;
  std::int64_t cut = 0;
  graph::visit(ds.graph, [&](auto v) {
    for (std::int64_t i = 0; i < v.num_rows; ++i)
      for (std::int64_t k = v.indptr[i]; k < v.indptr[i + 1]; ++k) cut += label[i] != label[v.indices[k]];
  });
  return static_cast<double>(cut) / static_cast<double>(ds.graph.num_edges());
}

PartitionQuality quality_of(const datasets::Dataset& ds, const Array<std::int32_t>& parts, std::int32_t num_parts) {
  const UnionGraph g = union_graph(ds);
  return evaluate_partition(g, global_train_ids(ds, g), parts, plan_halos(g, parts, num_parts));
}

PartitionResult run(const datasets::Dataset& ds, PartitionOptions o) {
  return partition_vertices(build_partition_input(ds, o), o);
}

}  // namespace

TEST_CASE("METIS finds a cut close to the planted one, far below random's (P - 1) / P", "[partition]") {
  for (std::int32_t p : {2, 4, 8}) {
    INFO("P = " << p);
    const datasets::Dataset ds = test::planted_sbm(4000, p, 0.95, 12, 7);
    const double planted = planted_cut_fraction(ds);
    PartitionOptions o;
    o.num_parts = p;
    const PartitionResult metis = run(ds, o);
    const PartitionQuality q = quality_of(ds, metis.parts, p);
    o.method = Method::random;
    const PartitionQuality random = quality_of(ds, run(ds, o).parts, p);
    CAPTURE(planted, q.edge_cut_fraction, random.edge_cut_fraction);
    CHECK(q.edge_cut_fraction <= planted * 1.25 + 0.005);
    CHECK(random.edge_cut_fraction >= 0.95 * (p - 1.0) / p);
    CHECK(q.edge_cut_fraction < random.edge_cut_fraction / 5);
    // METIS's objective counts each cut undirected edge once; the stored graph holds both ways.
    CHECK(2 * metis.objective == q.edge_cut);
    CHECK(q.vertices.ratio() <= 1.031);
  }
}

TEST_CASE("METIS gives the same parts for the same seed", "[partition]") {
  const datasets::Dataset ds = test::planted_sbm(1500, 3, 0.7, 10);
  PartitionOptions o;
  o.num_parts = 3;
  o.seed = 5;
  const std::vector<std::int32_t> a = run(ds, o).parts.to_vector();
  CHECK(run(ds, o).parts.to_vector() == a);
  std::int64_t in_range = 0;
  for (std::int32_t x : a) in_range += x >= 0 && x < 3;
  CHECK(in_range == 1500);
}

TEST_CASE("METIS balances edges and training vertices when asked, and minimises volume on request", "[partition]") {
  // Training vertices crowd into the low ids, so a vertex-balanced cut may split them unevenly.
  datasets::Dataset ds = test::planted_sbm(3000, 4, 0.9, 10);
  std::vector<std::int64_t> train;
  for (std::int64_t v = 0; v < 600; ++v) train.push_back(v);
  ds.split.train = Array<std::int64_t>::from_vector(train);
  ds.split.valid = Array<std::int64_t>::from_vector({});
  ds.split.test = Array<std::int64_t>::from_vector({});
  PartitionOptions o;
  o.num_parts = 4;
  o.balance = {BalanceKey::vertices, BalanceKey::edges, BalanceKey::train};
  const PartitionQuality q = quality_of(ds, run(ds, o).parts, 4);
  CHECK(q.vertices.ratio() <= 1.05);
  CHECK(q.edges.ratio() <= 1.05);
  CHECK(q.train.ratio() <= 1.05);
  o.balance = {};
  o.objective = Objective::vol;
  const PartitionResult vol = run(ds, o);
  CHECK(vol.objective > 0);
  CHECK(quality_of(ds, vol.parts, 4).edge_cut_fraction < 0.3);
}

TEST_CASE("METIS with one part puts every vertex in part 0 without calling METIS", "[partition]") {
  const datasets::Dataset ds = test::planted_sbm(100, 2, 0.8, 4);
  PartitionOptions o;
  const PartitionResult r = run(ds, o);
  CHECK(r.objective == 0);
  CHECK(std::count(r.parts.begin(), r.parts.end(), 0) == 100);
}

TEST_CASE("METIS partitions a graph without edges by vertex count", "[partition]") {
  datasets::Dataset ds = test::tiny_homogeneous(false, false, false, false);
  ds.graph = graph::CsrGraph(4, 4, Array<std::int64_t>::from_vector({0, 0, 0, 0, 0}), Array<std::int32_t>::vector(0));
  PartitionOptions o;
  o.num_parts = 2;
  const PartitionResult r = run(ds, o);
  CHECK(r.objective == 0);
  CHECK(std::count(r.parts.begin(), r.parts.end(), 0) == 2);
}

TEST_CASE("check_metis_capacity refuses, with the numbers, graphs past METIS's idx_t", "[partition]") {
  CHECK(metis_index_max() == 2147483647);
  CHECK_NOTHROW(check_metis_capacity(2147483647, 2147483647));
  CHECK_THROWS_AS(check_metis_capacity(2147483648LL, 10), UnsupportedError);
  CHECK_THROWS_WITH(check_metis_capacity(111059956, 3231371744LL),
                    Catch::Contains("111059956 vertices and 3231371744 adjacency entries") &&
                        Catch::Contains("at most 2147483647") && Catch::Contains("--method stream"));
}
