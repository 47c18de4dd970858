// Tests of graph/coo_to_csr.cpp: csr_from_coo on hand-drawn graphs, on random graphs against the
// naive std::map reference (both input widths, both index types, every option), and on malformed
// edge lists.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/build.hpp"
#include "graph/validate.hpp"
#include "tests/reference/naive_csr.hpp"
#include "tests/support/thread_count.hpp"

using namespace halo;
using namespace halo::graph;
using halo::test::NaiveCoo;
using halo::test::ThreadCount;

namespace {

template <class I>
CsrGraph build(const NaiveCoo& coo, const CooToCsrOptions& options, bool weighted) {
  const std::vector<I> rows(coo.rows.begin(), coo.rows.end());
  const std::vector<I> cols(coo.cols.begin(), coo.cols.end());
  return csr_from_coo<I>(coo.num_rows, coo.num_cols, rows.data(), cols.data(), weighted ? coo.weights.data() : nullptr,
                         static_cast<std::int64_t>(rows.size()), options);
}

std::vector<std::int32_t> cols_of(const CsrGraph& g) { return g.indices<std::int32_t>().to_vector(); }

// The edges of coo stably sorted by (row, column), weights carried.
NaiveCoo sorted_by_row(const NaiveCoo& coo) {
  std::vector<std::size_t> order(coo.rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::make_pair(coo.rows[a], coo.cols[a]) < std::make_pair(coo.rows[b], coo.cols[b]);
  });
  NaiveCoo sorted = coo;
  for (std::size_t i = 0; i < order.size(); ++i) {
    sorted.rows[i] = coo.rows[order[i]];
    sorted.cols[i] = coo.cols[order[i]];
    sorted.weights[i] = coo.weights[order[i]];
  }
  return sorted;
}

}  // namespace

//  edges (row <- col):  2<-0, 0<-1, 2<-1, 1<-2, 0<-2, 2<-0 again
//
//        0 ---> 2 <--- 1          row 0: {1, 2}
//        ^______|______^          row 1: {2}
//                                 row 2: {0, 0, 1}
TEST_CASE("csr_from_coo sorts a tiny edge list into rows with ascending columns", "[graph]") {
  const std::vector<std::int32_t> rows{2, 0, 2, 1, 0, 2};
  const std::vector<std::int32_t> cols{0, 1, 1, 2, 2, 0};
  const CsrGraph g = csr_from_coo<std::int32_t>(3, 3, rows.data(), cols.data(), nullptr, 6);
  CHECK(g.indptr().to_vector() == std::vector<std::int64_t>{0, 2, 3, 6});
  CHECK(cols_of(g) == std::vector<std::int32_t>{1, 2, 2, 0, 0, 1});
  CHECK(g.index_type() == IndexType::i32);
  CHECK_FALSE(g.has_weights());
  CHECK(g.properties().sorted);
  CHECK_FALSE(g.properties().symmetric);
}

TEST_CASE("csr_from_coo keeps repeated edges in input order with their weights", "[graph]") {
  // Row 0 receives (0, 3) w=1, (0, 1) w=2, (0, 3) w=3, (0, 1) w=4: sorted by column, the copies of
  // each edge keep their input order.
  const std::vector<std::int64_t> rows{0, 0, 0, 0};
  const std::vector<std::int64_t> cols{3, 1, 3, 1};
  const std::vector<float> w{1, 2, 3, 4};
  const CsrGraph g = csr_from_coo<std::int64_t>(1, 4, rows.data(), cols.data(), w.data(), 4);
  CHECK(cols_of(g) == std::vector<std::int32_t>{1, 1, 3, 3});
  CHECK(g.weights().to_vector() == std::vector<float>{2, 4, 1, 3});
}

//  0 -- 1 -- 2, plus a loop on 2 and the edge 0->1 given twice (weights 1 and 2, loop 5):
//  symmetrised like OGB's add_inverse_edge, then merged: row 0 {1: 3}, row 1 {0: 3, 2: 1},
//  row 2 {1: 1, 2: 10}.
TEST_CASE("csr_from_coo symmetrises like add_inverse_edge and merges the copies", "[graph]") {
  const std::vector<std::int32_t> rows{0, 1, 0, 2};
  const std::vector<std::int32_t> cols{1, 2, 1, 2};
  const std::vector<float> w{1, 1, 2, 5};
  CooToCsrOptions o;
  o.symmetrize = true;
  SECTION("copies kept: a symmetric multigraph") {
    const CsrGraph g = csr_from_coo<std::int32_t>(3, 3, rows.data(), cols.data(), w.data(), 4, o);
    CHECK(g.indptr().to_vector() == std::vector<std::int64_t>{0, 2, 5, 8});
    CHECK(cols_of(g) == std::vector<std::int32_t>{1, 1, 0, 0, 2, 1, 2, 2});
    CHECK(g.weights().to_vector() == std::vector<float>{1, 2, 1, 2, 1, 1, 5, 5});
    CHECK(g.properties().symmetric);
    CHECK_NOTHROW(validate(g, Validation::expensive));
  }
  SECTION("copies merged") {
    o.drop_duplicates = true;
    const CsrGraph g = csr_from_coo<std::int32_t>(3, 3, rows.data(), cols.data(), w.data(), 4, o);
    CHECK(g.indptr().to_vector() == std::vector<std::int64_t>{0, 1, 3, 5});
    CHECK(cols_of(g) == std::vector<std::int32_t>{1, 0, 2, 1, 2});
    CHECK(g.weights().to_vector() == std::vector<float>{3, 3, 1, 1, 10});
    CHECK(g.properties().symmetric);
    CHECK_NOTHROW(validate(g, Validation::expensive));
  }
}

//  row 0: {0, 1}   row 1: {}   row 2: {2, 2, 0}   (loops on 0 and, twice, on 2)
TEST_CASE("csr_from_coo drops, adds and replaces self loops", "[graph]") {
  const std::vector<std::int32_t> rows{0, 0, 2, 2, 2};
  const std::vector<std::int32_t> cols{0, 1, 2, 2, 0};
  const std::vector<float> w{7, 1, 3, 4, 1};
  CooToCsrOptions o;
  SECTION("dropped") {
    o.drop_self_loops = true;
    const CsrGraph g = csr_from_coo<std::int32_t>(3, 3, rows.data(), cols.data(), w.data(), 5, o);
    CHECK(g.indptr().to_vector() == std::vector<std::int64_t>{0, 1, 1, 2});
    CHECK(cols_of(g) == std::vector<std::int32_t>{1, 0});
  }
  SECTION("added where missing, existing ones kept") {
    o.add_self_loops = true;
    const CsrGraph g = csr_from_coo<std::int32_t>(3, 3, rows.data(), cols.data(), w.data(), 5, o);
    CHECK(g.indptr().to_vector() == std::vector<std::int64_t>{0, 2, 3, 6});
    CHECK(cols_of(g) == std::vector<std::int32_t>{0, 1, 1, 0, 2, 2});
    CHECK(g.weights().to_vector() == std::vector<float>{7, 1, 1, 1, 3, 4});
  }
  SECTION("dropped then added: exactly one loop of weight 1 per vertex") {
    o.drop_self_loops = true;
    o.add_self_loops = true;
    const CsrGraph g = csr_from_coo<std::int32_t>(3, 3, rows.data(), cols.data(), w.data(), 5, o);
    CHECK(g.indptr().to_vector() == std::vector<std::int64_t>{0, 2, 3, 5});
    CHECK(cols_of(g) == std::vector<std::int32_t>{0, 1, 1, 0, 2});
    CHECK(g.weights().to_vector() == std::vector<float>{1, 1, 1, 1, 1});
  }
  SECTION("unweighted input stays unweighted") {
    o.add_self_loops = true;
    o.drop_duplicates = true;
    const CsrGraph g = csr_from_coo<std::int32_t>(3, 3, rows.data(), cols.data(), nullptr, 5, o);
    CHECK_FALSE(g.has_weights());
    CHECK(cols_of(g) == std::vector<std::int32_t>{0, 1, 1, 0, 2});
  }
}

TEST_CASE("csr_from_coo adds self loops only to rows that have a matching column", "[graph]") {
  //  a 3 x 2 graph: rows 0 and 1 get loops, row 2 has no column 2
  const std::vector<std::int32_t> rows{2};
  const std::vector<std::int32_t> cols{1};
  CooToCsrOptions o;
  o.add_self_loops = true;
  const CsrGraph g = csr_from_coo<std::int32_t>(3, 2, rows.data(), cols.data(), nullptr, 1, o);
  CHECK(g.indptr().to_vector() == std::vector<std::int64_t>{0, 1, 2, 3});
  CHECK(cols_of(g) == std::vector<std::int32_t>{0, 1, 1});
}

TEST_CASE("csr_from_coo matches the naive reference on random graphs with every option", "[graph]") {
  const std::uint64_t seed = GENERATE(1, 2, 3);
  const bool weighted = GENERATE(false, true);
  const bool wide_input = GENERATE(false, true);
  const IndexType index_type = GENERATE(IndexType::i32, IndexType::i64);
  for (int mask = 0; mask < 16; ++mask) {
    CooToCsrOptions o;
    o.symmetrize = (mask & 1) != 0;
    o.drop_self_loops = (mask & 2) != 0;
    o.drop_duplicates = (mask & 4) != 0;
    o.add_self_loops = (mask & 8) != 0;
    o.index_type = index_type;
    // Square for symmetrising; otherwise sometimes wider than tall and sometimes taller.
    const std::int64_t rows = 1 + static_cast<std::int64_t>(seed * 37 % 200);
    const std::int64_t cols = o.symmetrize ? rows : 1 + static_cast<std::int64_t>((seed * 91 + mask) % 300);
    const NaiveCoo coo = halo::test::random_coo(seed * 100 + static_cast<std::uint64_t>(mask), rows, cols, 3 * rows);
    const CsrGraph g = wide_input ? build<std::int64_t>(coo, o, weighted) : build<std::int32_t>(coo, o, weighted);
    INFO("seed " << seed << " options " << mask << " weighted " << weighted);
    CHECK(g.index_type() == index_type);
    CHECK(g.has_weights() == weighted);
    CHECK(halo::test::csr_difference(halo::test::to_naive(g), halo::test::naive_csr_from_coo(coo, o, weighted)) == "");
    CHECK(g.properties().symmetric == o.symmetrize);
    CHECK_NOTHROW(validate(g, Validation::expensive));
  }
}

TEST_CASE("csr_from_coo sorts rows whether the edges come in order, nearly in order or shuffled", "[graph]") {
  // 72 000 edges over 6000 rows make two blocks of 4096 rows. Shuffled edges send the blocks
  // through the radix sort by column (two passes of digits below 2^13 columns, three below 2^24,
  // six below 2^62 with int64 indices); nearly ordered ones through the row-by-row sort; ordered
  // ones need neither. Copies of an edge keep their input order and weights on every path.
  const std::int64_t n = 6000;
  const std::int64_t num_cols = GENERATE(std::int64_t{6000}, std::int64_t{1} << 24, std::int64_t{1} << 62);
  const int order = GENERATE(0, 1, 2);  // 0: shuffled, 1: sorted with a few neighbours swapped, 2: sorted
  NaiveCoo coo = halo::test::random_coo(7 + static_cast<std::uint64_t>(order), n, num_cols, 12 * n);
  if (order > 0) {
    NaiveCoo sorted = sorted_by_row(coo);
    if (order == 1)
      for (std::size_t i = 0; i + 1 < sorted.rows.size(); i += 97) {
        std::swap(sorted.rows[i], sorted.rows[i + 1]);
        std::swap(sorted.cols[i], sorted.cols[i + 1]);
        std::swap(sorted.weights[i], sorted.weights[i + 1]);
      }
    coo = sorted;
  }
  CooToCsrOptions o;
  o.drop_duplicates = GENERATE(false, true);
  INFO("columns " << num_cols << " order " << order << " merged " << o.drop_duplicates);
  const CsrGraph g = build<std::int64_t>(coo, o, true);
  CHECK(g.index_type() == (num_cols > std::numeric_limits<std::int32_t>::max() ? IndexType::i64 : IndexType::i32));
  CHECK(halo::test::csr_difference(halo::test::to_naive(g), halo::test::naive_csr_from_coo(coo, o, true)) == "");
  CHECK_NOTHROW(validate(g, Validation::expensive));
}

TEST_CASE("csr_from_coo merges the sorted runs that concatenated sorted lists give every row", "[graph]") {
  // `parts` edge lists, each sorted by row and column, one after the other: every row holds one
  // ascending run per part, and twice as many when symmetrising (the reversed edges of a sorted
  // list come in ascending order too). Forty edges a row keep the runs' junctions rare enough
  // for the row-by-row merge rather than the radix sort; three runs leave one over to carry.
  const std::int64_t n = 6000;
  const int parts = GENERATE(1, 2, 3);
  CooToCsrOptions o;
  o.symmetrize = GENERATE(false, true);
  o.drop_duplicates = GENERATE(false, true);
  NaiveCoo coo;
  coo.num_rows = coo.num_cols = n;
  for (int part = 0; part < parts; ++part) {
    const NaiveCoo piece = sorted_by_row(halo::test::random_coo(31 + static_cast<std::uint64_t>(part), n, n, 40 * n / parts));
    coo.rows.insert(coo.rows.end(), piece.rows.begin(), piece.rows.end());
    coo.cols.insert(coo.cols.end(), piece.cols.begin(), piece.cols.end());
    coo.weights.insert(coo.weights.end(), piece.weights.begin(), piece.weights.end());
  }
  INFO("parts " << parts << " symmetrised " << o.symmetrize << " merged " << o.drop_duplicates);
  const CsrGraph g = build<std::int32_t>(coo, o, true);
  CHECK(halo::test::csr_difference(halo::test::to_naive(g), halo::test::naive_csr_from_coo(coo, o, true)) == "");
  CHECK_NOTHROW(validate(g, Validation::expensive));
}

TEST_CASE("csr_from_coo gives the same arrays whatever the thread count", "[graph]") {
  // Large enough for every thread to get a share and for the row sorts to be split.
  const NaiveCoo coo = halo::test::random_coo(42, 3000, 3000, 50000);
  CooToCsrOptions o;
  o.symmetrize = true;
  o.drop_duplicates = GENERATE(false, true);
  auto build_with = [&](int threads) {
    const ThreadCount scope(threads);
    return halo::test::to_naive(build<std::int32_t>(coo, o, true));
  };
  const auto one = build_with(1);
  CHECK(halo::test::csr_difference(one, build_with(2)) == "");
  CHECK(halo::test::csr_difference(one, build_with(3)) == "");
  CHECK(halo::test::csr_difference(one, halo::test::naive_csr_from_coo(coo, o, true)) == "");
}

TEST_CASE("csr_from_coo switches to int64 indices when the columns need them", "[graph]") {
  const std::int64_t huge = std::int64_t{std::numeric_limits<std::int32_t>::max()} + 10;
  const std::vector<std::int64_t> rows{1, 0, 1};
  const std::vector<std::int64_t> cols{huge - 1, 5, 0};
  const CsrGraph g = csr_from_coo<std::int64_t>(2, huge, rows.data(), cols.data(), nullptr, 3);
  REQUIRE(g.index_type() == IndexType::i64);
  CHECK(g.indices<std::int64_t>().to_vector() == std::vector<std::int64_t>{5, 0, huge - 1});
}

TEST_CASE("csr_from_coo builds empty graphs", "[graph]") {
  const CsrGraph none = csr_from_coo<std::int32_t>(0, 0, nullptr, nullptr, nullptr, 0);
  CHECK(none.num_rows() == 0);
  CHECK(none.num_edges() == 0);
  CooToCsrOptions o;
  o.add_self_loops = true;
  const CsrGraph loops = csr_from_coo<std::int32_t>(4, 4, nullptr, nullptr, nullptr, 0, o);
  CHECK(loops.indptr().to_vector() == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  CHECK(cols_of(loops) == std::vector<std::int32_t>{0, 1, 2, 3});
}

TEST_CASE("csr_from_coo names the first malformed edge, its value and the bound", "[graph]") {
  SECTION("column too large") {
    const std::vector<std::int32_t> rows{0, 1, 2, 3};
    const std::vector<std::int32_t> cols{1, 2, 3, 4};  // edge 3: column 4 in a 4 x 4 graph
    CHECK_THROWS_WITH(csr_from_coo<std::int32_t>(4, 4, rows.data(), cols.data(), nullptr, 4),
                      "csr_from_coo: edge 3 has column 4, expected 0 <= column < 4");
  }
  SECTION("negative row") {
    const std::vector<std::int64_t> rows{0, -7, 2};
    const std::vector<std::int64_t> cols{1, 1, 1};
    CHECK_THROWS_WITH(csr_from_coo<std::int64_t>(4, 4, rows.data(), cols.data(), nullptr, 3),
                      "csr_from_coo: edge 1 has row -7, expected 0 <= row < 4");
  }
  SECTION("negative column of a reversed edge when symmetrising") {
    const std::vector<std::int32_t> rows{0, 1};
    const std::vector<std::int32_t> cols{1, -1};
    CooToCsrOptions o;
    o.symmetrize = true;
    CHECK_THROWS_WITH(csr_from_coo<std::int32_t>(2, 2, rows.data(), cols.data(), nullptr, 2, o),
                      "csr_from_coo: edge 1 has column -1, expected 0 <= column < 2");
  }
  SECTION("the first of several, on a list spread over all threads") {
    const ThreadCount scope(3);
    NaiveCoo coo = halo::test::random_coo(9, 100, 100, 100000);
    coo.cols[90000] = 100;
    coo.rows[61234] = 1000;
    coo.cols[77777] = -3;
    CHECK_THROWS_WITH(build<std::int32_t>(coo, {}, false),
                      "csr_from_coo: edge 61234 has row 1000, expected 0 <= row < 100");
  }
  SECTION("row beyond a 64-bit bound") {
    const std::vector<std::int64_t> rows{std::int64_t{1} << 40};
    const std::vector<std::int64_t> cols{0};
    CHECK_THROWS_WITH(csr_from_coo<std::int64_t>(3, 3, rows.data(), cols.data(), nullptr, 1),
                      Catch::Contains("row 1099511627776, expected 0 <= row < 3"));
  }
}

TEST_CASE("csr_from_coo refuses bad shapes and options", "[graph]") {
  const std::vector<std::int32_t> ids{0};
  CooToCsrOptions o;
  o.symmetrize = true;
  CHECK_THROWS_WITH(csr_from_coo<std::int32_t>(2, 3, ids.data(), ids.data(), nullptr, 1, o),
                    Catch::Contains("symmetrize needs a square graph, got 2 x 3"));
  CHECK_THROWS_WITH(csr_from_coo<std::int32_t>(-1, 3, ids.data(), ids.data(), nullptr, 1),
                    Catch::Contains("negative shape -1 x 3"));
  CHECK_THROWS_WITH(csr_from_coo<std::int32_t>(2, 2, ids.data(), ids.data(), nullptr, -5),
                    Catch::Contains("negative edge count -5"));
  CHECK_THROWS_AS(csr_from_coo<std::int32_t>(2, 2, nullptr, ids.data(), nullptr, 1), InvalidArgument);
}

TEST_CASE("csr_from_coo sorts graphs whose row blocks are too tall for 16-bit rows-in-block", "[graph]") {
  // 70 000 edges make two blocks; over 2^20 + 3 rows that is blocks of 2^20 rows, so the rows
  // within a block take 32 bits. The edges fall on 200 rows, some at the blocks' ends, in no
  // order, ~350 to a row, which sends the blocks through the radix sort.
  const std::int64_t n = (std::int64_t{1} << 20) + 3;
  const std::int64_t block = std::int64_t{1} << 20;
  const std::int64_t edge_rows[] = {0, block - 1, block, n - 1};
  NaiveCoo coo = halo::test::random_coo(5, 200, 1000, 70000);
  coo.num_rows = n;
  for (std::int64_t& r : coo.rows) r = r < 196 ? r * 5300 : edge_rows[r - 196];
  const CsrGraph g = build<std::int32_t>(coo, CooToCsrOptions{}, true);
  CHECK(halo::test::csr_difference(halo::test::to_naive(g), halo::test::naive_csr_from_coo(coo, {}, true)) == "");
  for (std::int64_t r : edge_rows) CHECK(g.indptr()[r + 1] > g.indptr()[r]);
  CHECK_NOTHROW(validate(g, Validation::expensive));
}
