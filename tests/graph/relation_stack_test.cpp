// Tests of graph/relation_stack.*: the stack of a hand-drawn heterogeneous graph entry by entry,
// random graphs against the dense concatenation of each relation's mean matrix, one block taken
// back out (stack_block), index types, thread-count independence and the argument checks.
#include "graph/relation_stack.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "graph/validate.hpp"
#include "tests/reference/naive_csr.hpp"
#include "tests/support/thread_count.hpp"

using namespace halo;
using namespace halo::graph;

namespace {

CsrGraph csr(std::int64_t rows, std::int64_t cols, const std::vector<std::int32_t>& dst,
             const std::vector<std::int32_t>& src) {
  return csr_from_coo<std::int32_t>(rows, cols, dst.data(), src.data(), nullptr, static_cast<std::int64_t>(dst.size()));
}

//  vertex types: author a0..a2, paper p0..p3, field f0..f1
//    0  author -writes-> paper:          a0 -> p0, a1 -> p0, a2 -> p1, a2 -> p3
//    1  paper -cites-> paper:            p1 -> p0, p2 -> p0, p3 -> p0, p0 -> p2
//    2  paper -has_topic-> field:        p0 -> f1, p2 -> f0
//    3  field -rev_has_topic-> paper:    f1 -> p0, f0 -> p2
//  Papers aggregate from relations 0, 1, 3 (column blocks: authors 0-2, papers 3-6, fields 7-8);
//  fields from relation 2 (papers 0-3); authors from nothing.
HeteroGraph mini_mag() {
  HeteroGraph g;
  g.add_vertex_type("author", 3);
  g.add_vertex_type("paper", 4);
  g.add_vertex_type("field", 2);
  g.add_relation({"author", "writes", "paper"}, csr(4, 3, {0, 0, 1, 3}, {0, 1, 2, 2}));
  g.add_relation({"paper", "cites", "paper"}, csr(4, 4, {0, 0, 0, 2}, {1, 2, 3, 0}));
  g.add_relation({"paper", "has_topic", "field"}, csr(2, 4, {1, 0}, {0, 2}));
  g.add_relation({"field", "rev_has_topic", "paper"}, csr(4, 2, {0, 2}, {1, 0}));
  return g;
}

// The stack by its definition: the dense mean matrix of every relation into `dst` (entry count
// over row degree), placed side by side in relation order.
test::DenseMatrix naive_stack(const HeteroGraph& g, int dst) {
  std::vector<int> relations;
  std::int64_t width = 0;
  for (int r = 0; r < g.num_relations(); ++r)
    if (g.vertex_type(g.relation_type(r).dst) == dst) {
      relations.push_back(r);
      width += g.relation(r).num_cols();
    }
  test::DenseMatrix out;
  out.rows = g.vertex_count(dst);
  out.cols = width;
  out.value.assign(static_cast<std::size_t>(out.rows * out.cols), 0.0);
  out.present.assign(out.value.size(), false);
  std::int64_t offset = 0;
  for (int r : relations) {
    const test::DenseMatrix m = test::to_dense(test::to_naive(g.relation(r).clone().with_weights({})));
    for (std::int64_t i = 0; i < m.rows; ++i) {
      double degree = 0.0;
      for (std::int64_t j = 0; j < m.cols; ++j) degree += m.at(i, j);
      for (std::int64_t j = 0; j < m.cols; ++j) {
        const auto cell = static_cast<std::size_t>(i * out.cols + offset + j);
        out.value[cell] = m.has(i, j) ? m.at(i, j) / degree : 0.0;
        out.present[cell] = m.has(i, j);
      }
    }
    offset += m.cols;
  }
  return out;
}

// A random graph of three types (`counts` vertices) with relations between every ordered pair of types picked by the
// seed (self relations included), repeated edges and vertices without in-edges.
HeteroGraph random_hetero(std::uint64_t seed, const std::vector<std::int64_t>& counts, std::uint64_t max_edges) {
  RandomStream rng(seed, 0);
  HeteroGraph g;
  for (std::size_t t = 0; t < counts.size(); ++t) g.add_vertex_type("t" + std::to_string(t), counts[t]);
  int made = 0;
  for (int s = 0; s < 3; ++s)
    for (int d = 0; d < 3; ++d) {
      if (rng.below(3) == 0) continue;
      const test::NaiveCoo coo = test::random_coo(seed * 16 + static_cast<std::uint64_t>(made), counts[d], counts[s],
                                                  static_cast<std::int64_t>(rng.below(max_edges)));
      // Weighted on purpose: the stack must ignore the relations' own weights.
      g.add_relation({"t" + std::to_string(s), "r" + std::to_string(made++), "t" + std::to_string(d)},
                     csr_from_coo<std::int64_t>(counts[d], counts[s], coo.rows.data(), coo.cols.data(),
                                                coo.weights.data(), static_cast<std::int64_t>(coo.rows.size())));
    }
  return g;
}

}  // namespace

TEST_CASE("stack_relations places each relation in its column block with weights 1 / c_{i,r}", "[graph]") {
  const HeteroGraph g = mini_mag();
  const RelationStack s = stack_relations(g, g.vertex_type("paper"));
  CHECK(s.dst_type == 1);
  CHECK(s.relations == std::vector<int>{0, 1, 3});
  CHECK(s.block_offsets == std::vector<std::int64_t>{0, 3, 7, 9});
  CHECK(s.num_blocks() == 3);
  CHECK(s.width() == 9);
  REQUIRE(s.csr.num_rows() == 4);
  CHECK(s.csr.num_cols() == 9);
  CHECK(s.csr.index_type() == IndexType::i32);
  CHECK(s.csr.properties().sorted);
  CHECK_FALSE(s.csr.properties().symmetric);
  // p0: authors a0, a1 (c = 2); papers p1, p2, p3 (c = 3); field f1 (c = 1). p1: author a2.
  // p2: paper p0; field f0. p3: author a2.
  CHECK(s.csr.indptr().to_vector() == std::vector<std::int64_t>{0, 6, 7, 9, 10});
  CHECK(s.csr.indices<std::int32_t>().to_vector() == std::vector<std::int32_t>{0, 1, 4, 5, 6, 8, 2, 3, 7, 2});
  const float third = 1.0f / 3.0f;
  CHECK(s.csr.weights().to_vector() == std::vector<float>{0.5f, 0.5f, third, third, third, 1, 1, 1, 1, 1});
  validate(s.csr, Validation::expensive);

  const RelationStack fields = stack_relations(g, g.vertex_type("field"));
  CHECK(fields.relations == std::vector<int>{2});
  CHECK(fields.block_offsets == std::vector<std::int64_t>{0, 4});
  CHECK(fields.csr.indptr().to_vector() == std::vector<std::int64_t>{0, 1, 2});
  CHECK(fields.csr.indices<std::int32_t>().to_vector() == std::vector<std::int32_t>{2, 0});
  CHECK(fields.csr.weights().to_vector() == std::vector<float>{1, 1});
}

TEST_CASE("stack_relations gives a type that no relation ends at an empty n x 0 stack", "[graph]") {
  const HeteroGraph g = mini_mag();
  const RelationStack s = stack_relations(g, g.vertex_type("author"));
  CHECK(s.relations.empty());
  CHECK(s.block_offsets == std::vector<std::int64_t>{0});
  CHECK(s.width() == 0);
  CHECK(s.csr.num_rows() == 3);
  CHECK(s.csr.num_cols() == 0);
  CHECK(s.csr.num_edges() == 0);
  CHECK(s.csr.indptr().to_vector() == std::vector<std::int64_t>{0, 0, 0, 0});
  validate(s.csr, Validation::expensive);
}

TEST_CASE("stack_relations equals the side-by-side mean matrices of random relations, block by block", "[graph]") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u, 4u, 5u, 6u);
  const IndexType type = GENERATE(IndexType::i32, IndexType::i64);
  CAPTURE(seed, to_string(type));
  const HeteroGraph g = random_hetero(seed, {5, 9, 1}, 20);
  RelationStackOptions options;
  options.index_type = type;
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    CAPTURE(t);
    const RelationStack s = stack_relations(g, t, options);
    CHECK(s.csr.index_type() == type);
    validate(s.csr, Validation::expensive);
    const test::DenseMatrix expected = naive_stack(g, t);
    const test::DenseMatrix actual = test::to_dense(test::to_naive(s.csr));
    REQUIRE(actual.rows == expected.rows);
    REQUIRE(actual.cols == expected.cols);
    CHECK(actual.present == expected.present);
    for (std::size_t c = 0; c < expected.value.size(); ++c) CHECK(actual.value[c] == Approx(expected.value[c]));
    std::int64_t offset = 0;
    for (int k = 0; k < s.num_blocks(); ++k) {
      CAPTURE(k);
      CHECK(s.block_offsets[static_cast<std::size_t>(k)] == offset);
      // The block taken back out (stack_block) is the relation's mean matrix.
      const CsrGraph b = stack_block(s, k);
      validate(b, Validation::expensive);
      CHECK(b.index_type() == type);
      const test::DenseMatrix block = test::to_dense(test::to_naive(b));
      REQUIRE(block.rows == expected.rows);
      REQUIRE(block.cols == g.relation(s.relations[static_cast<std::size_t>(k)]).num_cols());
      for (std::int64_t i = 0; i < block.rows; ++i)
        for (std::int64_t j = 0; j < block.cols; ++j) {
          const auto cell = static_cast<std::size_t>(i * block.cols + j);
          const auto in_stack = static_cast<std::size_t>(i * expected.cols + offset + j);
          CHECK(block.present[cell] == expected.present[in_stack]);
          CHECK(block.value[cell] == Approx(expected.value[in_stack]));
        }
      offset += block.cols;
    }
    CHECK(s.width() == offset);
  }
}

TEST_CASE("stack_relations does not depend on the thread count", "[graph]") {
  // Big enough for the row loops to be cut into chunks for several threads.
  const HeteroGraph g = random_hetero(11, {9000, 5000, 300}, 40000);
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    const test::NaiveCsr one = test::with_threads(1, [&] { return test::to_naive(stack_relations(g, t).csr); });
    const test::NaiveCsr many = test::with_threads(3, [&] { return test::to_naive(stack_relations(g, t).csr); });
    CHECK(test::csr_difference(one, many) == "");
  }
}

TEST_CASE("stack_relations names a vertex type that does not exist", "[graph]") {
  const HeteroGraph g = mini_mag();
  CHECK_THROWS_WITH(stack_relations(g, 3), Catch::Contains("one of the graph's 3 vertex types, got 3"));
  CHECK_THROWS_AS(stack_relations(g, -1), InvalidArgument);
}

TEST_CASE("stack_block of the hand-drawn graph and a block that does not exist", "[graph]") {
  const HeteroGraph g = mini_mag();
  const RelationStack s = stack_relations(g, g.vertex_type("paper"));
  // Block 1 (cites): p0 <- p1, p2, p3 (c = 3); p2 <- p0.
  const CsrGraph cites = stack_block(s, 1);
  CHECK(cites.num_cols() == 4);
  CHECK(cites.indptr().to_vector() == std::vector<std::int64_t>{0, 3, 3, 4, 4});
  CHECK(cites.indices<std::int32_t>().to_vector() == std::vector<std::int32_t>{1, 2, 3, 0});
  const float third = 1.0f / 3.0f;
  CHECK(cites.weights().to_vector() == std::vector<float>{third, third, third, 1});
  CHECK_THROWS_WITH(stack_block(s, 3), Catch::Contains("block 3 of a stack with 3 blocks"));
}
