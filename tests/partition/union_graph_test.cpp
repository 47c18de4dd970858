// Tests of partition/union_graph.*: the global id space of homogeneous and heterogeneous datasets.
#include "partition/union_graph.hpp"

#include <catch2/catch.hpp>

#include "tests/partition/partition_fixtures.hpp"

using namespace halo;
using namespace halo::partition;

TEST_CASE("union_graph numbers the vertex types one after the other", "[partition]") {
  // tiny_hetero: papers 0..2, authors 3..4; writes (author -> paper), cites (paper -> paper).
  const datasets::Dataset ds = test::tiny_hetero();
  const UnionGraph g = union_graph(ds);
  CHECK(g.is_hetero);
  CHECK(g.num_vertices == 5);
  CHECK(g.type_names == std::vector<std::string>{"paper", "author"});
  CHECK(g.type_offsets == std::vector<std::int64_t>{0, 3, 5});
  REQUIRE(g.relations.size() == 2);
  CHECK(g.relations[0].key == "author__writes__paper");
  CHECK(g.relations[0].row_offset == 0);
  CHECK(g.relations[0].col_offset == 3);
  CHECK(g.relations[1].col_offset == 0);
  CHECK(g.num_entries() == 6);
  CHECK(g.type_of(2) == 0);
  CHECK(g.type_of(3) == 1);
  CHECK(g.type_index("author") == 1);
  CHECK_THROWS_AS(g.type_index("venue"), InvalidArgument);
  CHECK(union_in_degrees(g).to_vector() == std::vector<std::int64_t>{3, 2, 1, 0, 0});
  CHECK(global_train_ids(ds, g).to_vector() == std::vector<std::int64_t>{2});
}

TEST_CASE("union_graph of a homogeneous dataset is its graph", "[partition]") {
  const datasets::Dataset ds = test::tiny_homogeneous();
  const UnionGraph g = union_graph(ds);
  CHECK_FALSE(g.is_hetero);
  CHECK(g.type_offsets == std::vector<std::int64_t>{0, 4});
  REQUIRE(g.relations.size() == 1);
  CHECK(g.relations[0].csr == &ds.graph);
  CHECK(g.relations[0].key.empty());
  CHECK(union_in_degrees(g).to_vector() == std::vector<std::int64_t>{1, 1, 2, 0});
  CHECK(global_train_ids(ds, g).to_vector() == std::vector<std::int64_t>{0, 2});
}
