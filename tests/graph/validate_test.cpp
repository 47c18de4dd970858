// Tests of graph/validate.cpp: well-formed graphs pass, and each kind of malformed CSR or false
// claim is refused with a message that names the row, the position and the value.
#include "graph/validate.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/build.hpp"
#include "tests/reference/naive_csr.hpp"

using namespace halo;
using namespace halo::graph;

namespace {

CsrGraph make(std::int64_t rows, std::int64_t cols, std::vector<std::int64_t> indptr, std::vector<std::int32_t> indices,
              std::vector<float> weights = {}, CsrProperties props = {}) {
  return CsrGraph(rows, cols, Array<std::int64_t>::from_vector(indptr), Array<std::int32_t>::from_vector(indices),
                  weights.empty() ? Array<float>() : Array<float>::from_vector(weights), props);
}

constexpr CsrProperties sorted{true, false};
constexpr CsrProperties symmetric{true, true};

}  // namespace

TEST_CASE("validate accepts well-formed graphs at both levels", "[graph]") {
  const auto coo = halo::test::random_coo(3, 200, 200, 1000);
  CooToCsrOptions o;
  o.symmetrize = true;
  o.index_type = GENERATE(IndexType::i32, IndexType::i64);
  const CsrGraph g = csr_from_coo<std::int64_t>(200, 200, coo.rows.data(), coo.cols.data(), coo.weights.data(),
                                                static_cast<std::int64_t>(coo.rows.size()), o);
  CHECK_NOTHROW(validate(g));
  CHECK_NOTHROW(validate(g, Validation::expensive));
  CHECK_NOTHROW(validate(CsrGraph(), Validation::expensive));
}

//  indptr {0, 2, 1, 3}: row 1 would end before it starts
TEST_CASE("validate refuses offsets that decrease, naming the row", "[graph]") {
  const CsrGraph g = make(3, 3, {0, 2, 1, 3}, {0, 1, 2});
  CHECK_THROWS_WITH(validate(g), "validate: indptr decreases after row 1: indptr[1] = 2 > indptr[2] = 1");
}

//  row 0: {0, 2}   row 1: {5}   in a 2 x 3 graph: column 5 does not exist
TEST_CASE("validate refuses an out-of-range column in expensive mode only", "[graph]") {
  const CsrGraph g = make(2, 3, {0, 2, 3}, {0, 2, 5});
  CHECK_NOTHROW(validate(g));
  CHECK_THROWS_WITH(validate(g, Validation::expensive),
                    "validate: row 1, position 0 (edge 2): column 5 out of range, expected 0 <= column < 3");
  const CsrGraph negative = make(2, 3, {0, 2, 3}, {0, -4, 1});
  CHECK_THROWS_WITH(validate(negative, Validation::expensive),
                    Catch::Contains("row 0, position 1 (edge 1): column -4"));
  const CsrGraph wide(2, 3, Array<std::int64_t>::from_vector({0, 0, 1}), Array<std::int64_t>::from_vector({3}));
  CHECK_THROWS_WITH(validate(wide, Validation::expensive), Catch::Contains("row 1, position 0 (edge 0): column 3"));
}

TEST_CASE("validate refuses weights that are not finite", "[graph]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const CsrGraph g = make(2, 2, {0, 1, 3}, {1, 0, 1}, {1.0f, 2.0f, nan});
  CHECK_THROWS_WITH(validate(g, Validation::expensive),
                    Catch::Contains("row 1, position 1 (edge 2): weight nan is not finite"));
  const CsrGraph inf = make(1, 1, {0, 1}, {0}, {std::numeric_limits<float>::infinity()});
  CHECK_THROWS_WITH(validate(inf, Validation::expensive), Catch::Contains("weight inf is not finite"));
}

//  row 0: {0, 1}   row 1: {2, 0, 1} claimed sorted: column 0 follows column 2
TEST_CASE("validate refuses a false claim of sorted rows", "[graph]") {
  const CsrGraph g = make(2, 3, {0, 2, 5}, {0, 1, 2, 0, 1}, {}, sorted);
  CHECK_THROWS_WITH(validate(g, Validation::expensive),
                    "validate: graph claims sorted rows, but row 1 has column 0 at position 1 after column 2");
  CHECK_NOTHROW(validate(make(2, 3, {0, 2, 5}, {0, 1, 2, 0, 1}), Validation::expensive));
}

//  0 <-> 1, 1 -> 2 only:   row 0: {1}   row 1: {0}   row 2: {1}
TEST_CASE("validate refuses a false claim of symmetry, naming the unmatched entry", "[graph]") {
  CHECK_THROWS_WITH(validate(make(3, 3, {0, 1, 2, 3}, {1, 0, 1}, {}, symmetric), Validation::expensive),
                    "validate: graph claims symmetric, but row 2 has column 1 and row 1 has fewer entries in column 2");
  //  row 0: {1, 2}   row 1: {0}   row 2: {}: row 0's column 2 has no mirror
  CHECK_THROWS_WITH(validate(make(3, 3, {0, 2, 3, 3}, {1, 2, 0}, {}, symmetric), Validation::expensive),
                    "validate: graph claims symmetric, but row 0 has column 2 and row 2 has fewer entries in column 0");
  //  0 <-> 1 with weights 1 and 2
  CHECK_THROWS_WITH(validate(make(2, 2, {0, 1, 2}, {1, 0}, {1.0f, 2.0f}, symmetric), Validation::expensive),
                    "validate: graph claims symmetric, but row 0, column 1 has weight 1.000000 and row 1, column 0 has "
                    "weight 2.000000");
  CHECK_THROWS_WITH(validate(make(2, 3, {0, 0, 0}, {}, {}, symmetric), Validation::expensive),
                    Catch::Contains("graph claims symmetric, but it is 2 x 3"));
}

//  a symmetric multigraph: 0 <-> 1 twice (weights 1 and 2, listed in opposite orders), and an
//  unsorted symmetric graph:  row 0: {2, 1}  row 1: {0}  row 2: {0}
TEST_CASE("validate accepts symmetric multigraphs and unsorted symmetric graphs", "[graph]") {
  CHECK_NOTHROW(validate(make(2, 2, {0, 2, 4}, {1, 1, 0, 0}, {1, 2, 2, 1}, symmetric), Validation::expensive));
  CHECK_THROWS_WITH(validate(make(2, 2, {0, 2, 4}, {1, 1, 0, 0}, {1, 2, 2, 3}, symmetric), Validation::expensive),
                    Catch::Contains("row 0, column 1 has weight 1.000000 and row 1, column 0 has weight 2.000000"));
  CHECK_NOTHROW(
      validate(make(3, 3, {0, 2, 3, 4}, {2, 1, 0, 0}, {}, CsrProperties{false, true}), Validation::expensive));
  CHECK_THROWS_AS(
      validate(make(3, 3, {0, 2, 3, 4}, {2, 1, 0, 1}, {}, CsrProperties{false, true}), Validation::expensive),
      InvalidArgument);
}

TEST_CASE("validate on a heterogeneous graph names the faulty relation", "[graph]") {
  HeteroGraph g;
  g.add_vertex_type("author", 2);
  g.add_vertex_type("paper", 3);
  //  paper rows, author columns: row 2 lists author 7, which does not exist
  g.add_relation({"author", "writes", "paper"}, make(3, 2, {0, 1, 1, 2}, {0, 7}));
  CHECK_NOTHROW(validate(g));
  CHECK_THROWS_WITH(validate(g, Validation::expensive),
                    "validate: relation author__writes__paper: row 2, position 0 (edge 1): column 7 out of range, "
                    "expected 0 <= column < 2");
}
