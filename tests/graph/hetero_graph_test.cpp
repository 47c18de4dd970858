// Tests of graph/hetero_graph.cpp: vertex types, relations, shape checks, reverse relations.
#include "graph/hetero_graph.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "graph/build.hpp"
#include "graph/validate.hpp"
#include "tests/reference/naive_csr.hpp"

using namespace halo;
using namespace halo::graph;

namespace {

CsrGraph csr(std::int64_t rows, std::int64_t cols, const std::vector<std::int32_t>& dst,
             const std::vector<std::int32_t>& src) {
  return csr_from_coo<std::int32_t>(rows, cols, dst.data(), src.data(), nullptr, static_cast<std::int64_t>(dst.size()));
}

//  a miniature ogbn-mag: 3 authors, 4 papers, 2 institutions
//    author -writes-> paper:        a0 -> p0, a0 -> p1, a2 -> p3
//    paper -cites-> paper:          p1 -> p0, p3 -> p0
//    author -affiliated_with-> institution:  a1 -> i0
HeteroGraph mini_mag() {
  HeteroGraph g;
  g.add_vertex_type("author", 3);
  g.add_vertex_type("paper", 4);
  g.add_vertex_type("institution", 2);
  g.add_relation({"author", "writes", "paper"}, csr(4, 3, {0, 1, 3}, {0, 0, 2}));
  g.add_relation({"paper", "cites", "paper"}, csr(4, 4, {0, 0}, {1, 3}));
  g.add_relation({"author", "affiliated_with", "institution"}, csr(2, 3, {0}, {1}));
  return g;
}

}  // namespace

TEST_CASE("HeteroGraph counts its vertex types, relations and edges", "[graph]") {
  const HeteroGraph g = mini_mag();
  CHECK(g.num_vertex_types() == 3);
  CHECK(g.vertex_type("paper") == 1);
  CHECK(g.vertex_type_name(2) == "institution");
  CHECK(g.vertex_count(g.vertex_type("author")) == 3);
  CHECK(g.has_vertex_type("author"));
  CHECK_FALSE(g.has_vertex_type("field_of_study"));
  CHECK(g.total_vertices() == 9);
  CHECK(g.num_relations() == 3);
  CHECK(g.total_edges() == 6);
  CHECK(g.find_relation({"paper", "cites", "paper"}) == 1);
  CHECK(g.find_relation({"paper", "cites", "author"}) == -1);
  CHECK(g.relation_type(0).key() == "author__writes__paper");
  CHECK(g.relation(0).num_rows() == 4);
}

TEST_CASE("HeteroGraph refuses duplicate or unknown types and misshapen relations", "[graph]") {
  HeteroGraph g = mini_mag();
  CHECK_THROWS_WITH(g.add_vertex_type("paper", 5), Catch::Contains("vertex type 'paper' exists already"));
  CHECK_THROWS_AS(g.add_vertex_type("", 5), InvalidArgument);
  CHECK_THROWS_AS(g.add_vertex_type("topic", -1), InvalidArgument);
  CHECK_THROWS_WITH(g.vertex_type("topic"),
                    Catch::Contains("unknown vertex type 'topic' (known: author, paper, institution)"));
  CHECK_THROWS_WITH(g.add_relation({"paper", "cites", "paper"}, csr(4, 4, {}, {})),
                    Catch::Contains("relation paper__cites__paper exists already"));
  CHECK_THROWS_WITH(g.add_relation({"paper", "has_topic", "topic"}, csr(4, 4, {}, {})),
                    Catch::Contains("unknown vertex type 'topic'"));
  CHECK_THROWS_WITH(g.add_relation({"institution", "employs", "author"}, csr(2, 3, {}, {})),
                    Catch::Contains("needs a 3 x 2 CSR (rows = 'author', columns = 'institution'), got 2 x 3"));
  CHECK(g.num_relations() == 3);
}

TEST_CASE("add_reverse_relations adds each missing reverse once, holding the transpose", "[graph]") {
  HeteroGraph g = mini_mag();
  g.add_relation({"institution", "rev_affiliated_with", "author"}, csr(3, 2, {1}, {0}));
  g.add_reverse_relations();
  // writes and cites get reverses; affiliated_with had one already.
  CHECK(g.num_relations() == 6);
  const int rev_writes = g.find_relation({"paper", "rev_writes", "author"});
  REQUIRE(rev_writes >= 0);
  const CsrGraph& t = g.relation(rev_writes);
  CHECK(t.num_rows() == 3);
  CHECK(t.num_cols() == 4);
  const auto expected = halo::test::naive_transpose(halo::test::to_naive(g.relation(0)));
  CHECK(halo::test::csr_difference(halo::test::to_naive(t), expected) == "");
  CHECK(g.find_relation({"paper", "rev_cites", "paper"}) >= 0);
  CHECK(g.total_edges() == 12);
  g.add_reverse_relations();
  CHECK(g.num_relations() == 6);
  CHECK_NOTHROW(validate(g, Validation::expensive));
}
