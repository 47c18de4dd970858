// Tests of graph/csr.*: construction checks, views, index types.
#include "graph/csr.hpp"

#include <catch2/catch.hpp>

using namespace halo;
using namespace halo::graph;

//  0 -> 1, 0 -> 2, 1 -> 2   stored as rows of destinations:
//  row 0: {}   row 1: {0}   row 2: {0, 1}
static CsrGraph tiny_graph() {
  return CsrGraph(3, 3, Array<std::int64_t>::from_vector({0, 0, 1, 3}),
                  Array<std::int32_t>::from_vector({0, 0, 1}));
}

TEST_CASE("CsrGraph reports its shape and exposes a matching view", "[graph]") {
  const CsrGraph g = tiny_graph();
  CHECK(g.num_rows() == 3);
  CHECK(g.num_edges() == 3);
  CHECK(g.index_type() == IndexType::i32);
  CHECK_FALSE(g.has_weights());
  const auto v = g.view<std::int32_t>();
  CHECK(v.degree(2) == 2);
  CHECK(v.indices[2] == 1);
  CHECK(v.weights == nullptr);
  CHECK_THROWS_AS(g.view<std::int64_t>(), InvalidArgument);
}

TEST_CASE("CsrGraph rejects offsets that disagree with the index count", "[graph]") {
  CHECK_THROWS_WITH(CsrGraph(2, 2, Array<std::int64_t>::from_vector({0, 1, 3}),
                             Array<std::int32_t>::from_vector({0, 1})),
                    Catch::Contains("indptr ends at 3 but there are 2 indices"));
  CHECK_THROWS_AS(CsrGraph(2, 2, Array<std::int64_t>::from_vector({0, 1}), Array<std::int32_t>::from_vector({0})),
                  InvalidArgument);
}

TEST_CASE("index_type_for switches to int64 past 2^31 - 1 columns", "[graph]") {
  CHECK(index_type_for(2147483647) == IndexType::i32);
  CHECK(index_type_for(2147483648LL) == IndexType::i64);
}

TEST_CASE("A default CsrGraph is the empty graph and can be copied", "[graph]") {
  const CsrGraph g;
  CHECK(g.num_rows() == 0);
  CHECK(g.num_edges() == 0);
  CHECK(g.indptr().size() == 1);
  CHECK(g.clone().num_rows() == 0);
}
