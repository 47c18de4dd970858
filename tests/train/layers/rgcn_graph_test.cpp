// Tests of train/layers/rgcn_graph.*: the stacks and relation facts of a hand-drawn graph, and a part's
// graph given relation by relation, with its size checks.
#include "train/layers/rgcn_graph.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "graph/build.hpp"

using namespace halo;
using namespace halo::train;

namespace {

graph::CsrGraph csr(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& dst,
                    const std::vector<std::int64_t>& src) {
  return graph::csr_from_coo<std::int64_t>(rows, cols, dst.data(), src.data(), nullptr,
                                           static_cast<std::int64_t>(dst.size()));
}

}  // namespace

TEST_CASE("RgcnGraph stacks the relations into each type in graph order", "[train]") {
  //  user (2) -buys-> item (3): u0 -> i0, u1 -> i0, u1 -> i1;  item -rev_buys-> user;
  //  item -similar-> item: i2 -> i0
  graph::HeteroGraph g;
  g.add_vertex_type("user", 2);
  g.add_vertex_type("item", 3);
  g.add_relation({"user", "buys", "item"}, csr(3, 2, {0, 0, 1}, {0, 1, 1}));
  g.add_relation({"item", "rev_buys", "user"}, csr(2, 3, {0, 1, 1}, {0, 0, 1}));
  g.add_relation({"item", "similar", "item"}, csr(3, 3, {0}, {2}));
  const RgcnGraph rg(g);
  CHECK(rg.num_vertex_types() == 2);
  CHECK(rg.num_relations() == 3);
  CHECK(rg.num_outputs(1) == 3);
  CHECK(rg.num_inputs(1) == 3);
  CHECK(rg.relation_src(2) == 1);
  CHECK(rg.relation_dst(1) == 0);
  // Users aggregate from rev_buys (3 item rows); items from buys (2 user rows), then similar.
  CHECK(rg.relation_block(1) == 0);
  CHECK(rg.relation_block(0) == 0);
  CHECK(rg.relation_block(2) == 1);
  CHECK(rg.relation_rows(0) == 2);
  CHECK(rg.relation_edges(0) == 3);
  CHECK(rg.relation_edges(2) == 1);
  CHECK(rg.stack(0).width() == 3);
  CHECK(rg.stack(1).relations == std::vector<int>{0, 2});
  CHECK(rg.stack(1).csr.num_rows() == 3);
  CHECK(rg.stack(1).csr.num_cols() == 5);
}

TEST_CASE("RgcnGraph of a part has more input rows than output rows and checks every relation's size", "[train]") {
  // A part owning 2 of its 3 users and 1 of its 2 items: buys is 1 x 3, rev_buys 2 x 2.
  const graph::CsrGraph buys = csr(1, 3, {0, 0}, {0, 2});
  const graph::CsrGraph rev_buys = csr(2, 2, {0, 1}, {1, 1});
  const RgcnGraph rg({"user", "item"}, {2, 1}, {3, 2},
                     {{{"user", "buys", "item"}, 0, 1, &buys}, {{"item", "rev_buys", "user"}, 1, 0, &rev_buys}});
  CHECK(rg.num_outputs(0) == 2);
  CHECK(rg.num_inputs(0) == 3);
  CHECK(rg.relation_rows(0) == 3);
  CHECK(rg.stack(1).csr.num_rows() == 1);
  CHECK(rg.stack(1).csr.num_cols() == 3);
  CHECK(rg.stack(1).csr.weights().to_vector() == std::vector<float>{0.5f, 0.5f});
  CHECK_THROWS_WITH(RgcnGraph({"user", "item"}, {2, 1}, {3, 2}, {{{"user", "buys", "item"}, 0, 1, &rev_buys}}),
                    Catch::Contains("relation user__buys__item is 2 x 2, expected 1 x 3"));
  CHECK_THROWS_WITH(RgcnGraph({"user", "item"}, {4, 1}, {3, 2}, {}), Catch::Contains("4 outputs and 3 inputs"));
}
