// Tests of partition/metis_graph_file.*: the METIS graph format, byte for byte.
#include "partition/metis_graph_file.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "graph/build.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;

TEST_CASE("write_metis_graph writes a header and 1-based neighbour lists", "[partition]") {
  // 0 - 1 - 2, and 3 alone.
  const std::vector<std::int32_t> a = {0, 1};
  const std::vector<std::int32_t> b = {1, 2};
  graph::CooToCsrOptions sym;
  sym.symmetrize = true;
  const graph::CsrGraph g = graph::csr_from_coo<std::int32_t>(4, 4, a.data(), b.data(), nullptr, 2, sym);
  test::ScratchDir scratch;
  partition::write_metis_graph(g, scratch / "g.graph");
  std::ifstream in(scratch / "g.graph");
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "4 2\n2\n1 3\n2\n\n");
  CHECK_THROWS_AS(partition::write_metis_graph(graph::CsrGraph(2, 2, Array<std::int64_t>::from_vector({0, 1, 1}),
                                                               Array<std::int32_t>::from_vector({1})),
                                               scratch / "h.graph"),
                  InvalidArgument);
}
