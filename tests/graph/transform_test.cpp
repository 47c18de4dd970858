// Tests of graph/transform.cpp: transpose, row selection, degrees, self loops and the GCN / mean
// weights, on hand-drawn graphs and on random graphs against the naive and dense references.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/build.hpp"
#include "graph/validate.hpp"
#include "tests/reference/naive_csr.hpp"

using namespace halo;
using namespace halo::graph;
using halo::test::NaiveCoo;

namespace {

CsrGraph random_graph(std::uint64_t seed, std::int64_t rows, std::int64_t cols, bool weighted, IndexType type,
                      bool symmetrize = false) {
  const NaiveCoo coo = halo::test::random_coo(seed, rows, cols, 4 * rows);
  CooToCsrOptions o;
  o.index_type = type;
  o.symmetrize = symmetrize;
  return csr_from_coo<std::int64_t>(rows, cols, coo.rows.data(), coo.cols.data(),
                                    weighted ? coo.weights.data() : nullptr, static_cast<std::int64_t>(coo.rows.size()),
                                    o);
}

//  rows of destinations:  row 0: {1, 2}   row 1: {}   row 2: {0, 2, 3}   (3 x 4)
CsrGraph tiny(bool weighted, bool sorted = true) {
  Array<float> w = weighted ? Array<float>::from_vector({1, 2, 3, 4, 5}) : Array<float>();
  CsrProperties props;
  props.sorted = sorted;
  return CsrGraph(3, 4, Array<std::int64_t>::from_vector({0, 2, 2, 5}),
                  Array<std::int32_t>::from_vector({1, 2, 0, 2, 3}), std::move(w), props);
}

}  // namespace

TEST_CASE("transpose swaps rows and columns of a tiny graph and carries the weights", "[graph]") {
  //  transpose (4 x 3): row 0: {2}  row 1: {0}  row 2: {0, 2}  row 3: {2}
  const CsrGraph t = transpose(tiny(true));
  CHECK(t.num_rows() == 4);
  CHECK(t.num_cols() == 3);
  CHECK(t.indptr().to_vector() == std::vector<std::int64_t>{0, 1, 2, 4, 5});
  CHECK(t.indices<std::int32_t>().to_vector() == std::vector<std::int32_t>{2, 0, 0, 2, 2});
  CHECK(t.weights().to_vector() == std::vector<float>{3, 1, 2, 4, 5});
  CHECK(t.properties().sorted);
}

TEST_CASE("transpose matches the naive reference and undoes itself", "[graph]") {
  const std::uint64_t seed = GENERATE(1, 2, 3, 4);
  const IndexType type = GENERATE(IndexType::i32, IndexType::i64);
  const bool weighted = GENERATE(false, true);
  const CsrGraph g = random_graph(seed, 150, 90, weighted, type);
  const CsrGraph t = transpose(g);
  CHECK(t.index_type() == type);
  const auto expected = halo::test::naive_transpose(halo::test::to_naive(g));
  CHECK(halo::test::csr_difference(halo::test::to_naive(t), expected) == "");
  CHECK(halo::test::csr_difference(halo::test::to_naive(transpose(t)), halo::test::to_naive(g)) == "");
}

TEST_CASE("transpose sorts the rows of an unsorted graph and keeps a symmetric claim", "[graph]") {
  // Row 2 lists its columns out of order; the transpose's rows come out sorted anyway.
  CsrGraph g(3, 3, Array<std::int64_t>::from_vector({0, 1, 1, 3}), Array<std::int32_t>::from_vector({2, 2, 0}));
  const CsrGraph t = transpose(g);
  CHECK(t.indptr().to_vector() == std::vector<std::int64_t>{0, 1, 1, 3});
  CHECK(t.indices<std::int32_t>().to_vector() == std::vector<std::int32_t>{2, 0, 2});
  const CsrGraph sym = random_graph(5, 60, 60, true, IndexType::i32, true);
  REQUIRE(sym.properties().symmetric);
  CHECK(transpose(sym).properties().symmetric);
}

TEST_CASE("select_rows copies the listed rows in their order, repeats included", "[graph]") {
  const IndexType type = GENERATE(IndexType::i32, IndexType::i64);
  const bool weighted = GENERATE(false, true);
  const CsrGraph g = random_graph(11, 120, 70, weighted, type);
  const std::vector<std::int64_t> rows{119, 3, 3, 0, 57, 58, 1};
  const CsrGraph s = select_rows(g, rows.data(), static_cast<std::int64_t>(rows.size()));
  CHECK(s.index_type() == type);
  CHECK(s.has_weights() == weighted);
  CHECK(s.properties().sorted == g.properties().sorted);
  const halo::test::NaiveCsr from = halo::test::to_naive(g);
  halo::test::NaiveCsr expected;
  expected.num_rows = static_cast<std::int64_t>(rows.size());
  expected.num_cols = g.num_cols();
  for (std::int64_t r : rows) {
    for (auto e = from.indptr[static_cast<std::size_t>(r)]; e < from.indptr[static_cast<std::size_t>(r) + 1]; ++e) {
      expected.indices.push_back(from.indices[static_cast<std::size_t>(e)]);
      expected.weights.push_back(from.weights[static_cast<std::size_t>(e)]);
    }
    expected.indptr.push_back(static_cast<std::int64_t>(expected.indices.size()));
  }
  REQUIRE(expected.indices.size() > 10);
  CHECK(halo::test::csr_difference(halo::test::to_naive(s), expected) == "");
  CHECK(select_rows(g, rows.data(), 0).num_rows() == 0);
  const std::vector<std::int64_t> outside{5, 120};
  CHECK_THROWS_WITH(select_rows(g, outside.data(), 2), Catch::Contains("row 120 (entry 1)"));
}

TEST_CASE("row and column degrees count the entries of each row and column", "[graph]") {
  const CsrGraph g = tiny(false);
  CHECK(row_degrees(g).to_vector() == std::vector<std::int64_t>{2, 0, 3});
  CHECK(column_degrees(g).to_vector() == std::vector<std::int64_t>{1, 1, 2, 1});

  const IndexType type = GENERATE(IndexType::i32, IndexType::i64);
  const CsrGraph r = random_graph(7, 3000, 2000, false, type);
  std::vector<std::int64_t> rows(3000, 0), cols(2000, 0);
  const auto n = halo::test::to_naive(r);
  for (std::size_t row = 0; row < 3000; ++row)
    for (auto p = n.indptr[row]; p < n.indptr[row + 1]; ++p) {
      ++rows[row];
      ++cols[static_cast<std::size_t>(n.indices[static_cast<std::size_t>(p)])];
    }
  CHECK(row_degrees(r).to_vector() == rows);
  CHECK(column_degrees(r).to_vector() == cols);
}

TEST_CASE("with_self_loops adds the missing loops and keeps the existing ones", "[graph]") {
  //  row 0: {0 (w 5), 2}   row 1: {}   row 2: {1}   ->   row 0: {0 (w 5), 2}  row 1: {1}  row 2: {1, 2}
  const CsrGraph g(3, 3, Array<std::int64_t>::from_vector({0, 2, 2, 3}), Array<std::int32_t>::from_vector({0, 2, 1}),
                   Array<float>::from_vector({5, 6, 7}), CsrProperties{true, false});
  const CsrGraph s = with_self_loops(g);
  CHECK(s.indptr().to_vector() == std::vector<std::int64_t>{0, 2, 3, 5});
  CHECK(s.indices<std::int32_t>().to_vector() == std::vector<std::int32_t>{0, 2, 1, 1, 2});
  CHECK(s.weights().to_vector() == std::vector<float>{5, 6, 1, 7, 1});
  CHECK(s.properties().sorted);
  CHECK_THROWS_WITH(with_self_loops(tiny(false)), Catch::Contains("needs a square graph, got 3 x 4"));
}

TEST_CASE("with_self_loops appends the loop to the rows of an unsorted graph", "[graph]") {
  //  row 0: {1, 0}   row 1: {0}   (unsorted claim) -> row 1 gets its loop at the end
  const CsrGraph g(2, 2, Array<std::int64_t>::from_vector({0, 2, 3}), Array<std::int32_t>::from_vector({1, 0, 0}));
  const CsrGraph s = with_self_loops(g);
  CHECK(s.indices<std::int32_t>().to_vector() == std::vector<std::int32_t>{1, 0, 0, 1});
  CHECK_FALSE(s.properties().sorted);
}

//  the path 0 - 1 - 2, both directions: with loops the degrees are 2, 3, 2, so
//  Â[0][1] = 1/sqrt(6), Â[1][1] = 1/3, Â[0][0] = 1/2.
TEST_CASE("gcn_normalize gives Kipf and Welling's weights on a path", "[graph]") {
  const CsrGraph g(3, 3, Array<std::int64_t>::from_vector({0, 1, 3, 4}), Array<std::int32_t>::from_vector({1, 0, 2, 1}),
                   {}, CsrProperties{true, true});
  const CsrGraph a = gcn_normalize(g);
  CHECK(a.indptr().to_vector() == std::vector<std::int64_t>{0, 2, 5, 7});
  CHECK(a.indices<std::int32_t>().to_vector() == std::vector<std::int32_t>{0, 1, 0, 1, 2, 1, 2});
  const std::vector<float> w = a.weights().to_vector();
  const double s6 = 1.0 / std::sqrt(6.0);
  const std::vector<double> expected{0.5, s6, s6, 1.0 / 3.0, s6, s6, 0.5};
  for (std::size_t i = 0; i < w.size(); ++i) CHECK(w[i] == Approx(expected[i]).epsilon(1e-6));
  CHECK(a.properties().symmetric);
  CHECK_NOTHROW(validate(a, Validation::expensive));
}

TEST_CASE("gcn_normalize matches the dense reference on random weighted and unweighted graphs", "[graph]") {
  const std::uint64_t seed = GENERATE(11, 12, 13);
  const bool weighted = GENERATE(false, true);
  const IndexType type = GENERATE(IndexType::i32, IndexType::i64);
  const bool symmetrize = GENERATE(false, true);
  const CsrGraph g = random_graph(seed, 40, 40, weighted, type, symmetrize);
  const CsrGraph a = gcn_normalize(g);
  const auto expected = halo::test::naive_gcn_normalize(halo::test::to_dense(halo::test::to_naive(g)));
  const auto got = halo::test::to_dense(halo::test::to_naive(a));
  for (std::int64_t r = 0; r < 40; ++r)
    for (std::int64_t c = 0; c < 40; ++c) {
      INFO("row " << r << " column " << c);
      CHECK(got.has(r, c) == expected.has(r, c));
      CHECK(got.at(r, c) == Approx(expected.at(r, c)).epsilon(1e-5).margin(1e-7));
    }
  CHECK(a.properties().symmetric == symmetrize);
  // A symmetric input must give bit-identical mirrored weights, or validate would refuse it.
  CHECK_NOTHROW(validate(a, Validation::expensive));
}

TEST_CASE("mean_normalize weights each row's entries by one over its degree", "[graph]") {
  const CsrGraph m = mean_normalize(tiny(true));
  CHECK(m.indices<std::int32_t>().to_vector() == std::vector<std::int32_t>{1, 2, 0, 2, 3});
  CHECK(m.weights().to_vector() == std::vector<float>{0.5f, 0.5f, 1 / 3.0f, 1 / 3.0f, 1 / 3.0f});
  const CsrGraph sym = random_graph(3, 30, 30, false, IndexType::i64, true);
  const CsrGraph ms = mean_normalize(sym);
  CHECK_FALSE(ms.properties().symmetric);
  CHECK(ms.properties().sorted);
  const auto deg = row_degrees(sym);
  const auto n = halo::test::to_naive(ms);
  for (std::size_t r = 0; r < 30; ++r)
    for (auto p = n.indptr[r]; p < n.indptr[r + 1]; ++p)
      CHECK(n.weights[static_cast<std::size_t>(p)] ==
            Approx(1.0 / static_cast<double>(deg[static_cast<std::int64_t>(r)])));
}
