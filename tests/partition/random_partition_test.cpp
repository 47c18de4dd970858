// Tests of partition/random_partition.cpp: exact balance, reproducibility per seed, and the
// expected cut of (P - 1) / P.
#include <catch2/catch.hpp>

#include "partition/partitioner.hpp"
#include "partition/quality.hpp"
#include "tests/partition/partition_fixtures.hpp"

using namespace halo;
using namespace halo::partition;

TEST_CASE("random_partition gives every part n / P vertices, give or take one", "[partition]") {
  for (std::int64_t p : {1, 3, 7}) {
    const Array<std::int32_t> parts = random_partition(1000, p, 9);
    std::vector<std::int64_t> size(static_cast<std::size_t>(p), 0);
    for (std::int32_t x : parts) ++size[static_cast<std::size_t>(x)];
    const auto [lo, hi] = std::minmax_element(size.begin(), size.end());
    CHECK(*lo == 1000 / p);
    CHECK(*hi - *lo <= 1);
  }
  // As many parts as vertices: one vertex each.
  std::vector<std::int32_t> each = random_partition(5, 5, 1).to_vector();
  std::sort(each.begin(), each.end());
  CHECK(each == std::vector<std::int32_t>{0, 1, 2, 3, 4});
}

TEST_CASE("random_partition depends on the seed only", "[partition]") {
  CHECK(random_partition(500, 4, 3).to_vector() == random_partition(500, 4, 3).to_vector());
  CHECK(random_partition(500, 4, 3).to_vector() != random_partition(500, 4, 4).to_vector());
}

TEST_CASE("random_partition cuts about (P - 1) / P of the edges", "[partition]") {
  const datasets::Dataset ds = test::planted_sbm(5000, 4, 0.9, 10);
  const UnionGraph g = union_graph(ds);
  for (std::int32_t p : {2, 4}) {
    const Array<std::int32_t> parts = random_partition(5000, p, 2);
    const PartitionQuality q = evaluate_partition(g, global_train_ids(ds, g), parts, plan_halos(g, parts, p));
    CHECK(q.edge_cut_fraction == Approx((p - 1.0) / p).margin(0.02));
  }
}

TEST_CASE("random_partition refuses more parts than vertices and fewer than one", "[partition]") {
  CHECK_THROWS_WITH(random_partition(3, 4, 1), Catch::Contains("cannot cut 3 vertices into 4 parts"));
  CHECK_THROWS_WITH(random_partition(3, 0, 1), Catch::Contains("at least 1, got 0"));
}
