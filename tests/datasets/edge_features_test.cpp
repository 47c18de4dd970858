// Tests of kept edge features (OgbReadOptions::keep_edge_features, graph/edge_feat.npy): every CSR
// entry gets the row of the stored edge it came from, reversed copies and repeated edges included,
// against a reference built by one global stable sort of the edge list; the refusals; the
// dataset directory's round trip and its check of the values.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "datasets/dataset_dir.hpp"
#include "datasets/detail/edge_feature_order.hpp"
#include "datasets/ogb_reader.hpp"
#include "graph/base/error.hpp"
#include "graph/build.hpp"
#include "tests/datasets/ogb_fixture.hpp"
#include "tests/support/corrupt_files.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::datasets;
using halo::test::ScratchDir;

namespace {

// Stored edge e's features: (e + 0.25, -e, 7).
float feature(std::int64_t e, std::int64_t c) {
  return c == 0 ? static_cast<float>(e) + 0.25f : c == 1 ? -static_cast<float>(e) : 7.0f;
}

// For each CSR entry, the stored edge it must carry: the edge list (stored edges as (dst, src),
// then with `inverse` their reverses) stably sorted by (row, column) in one global sort.
std::vector<std::int64_t> reference_edge_of_entry(const std::vector<std::pair<std::int64_t, std::int64_t>>& edges,
                                                  bool inverse) {
  std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> list;  // (row, col, stored edge)
  const auto e = static_cast<std::int64_t>(edges.size());
  for (std::int64_t i = 0; i < e; ++i) list.emplace_back(edges[i].second, edges[i].first, i);
  if (inverse)
    for (std::int64_t i = 0; i < e; ++i) list.emplace_back(edges[i].first, edges[i].second, i);
  std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::vector<std::int64_t> out;
  for (const auto& t : list) out.push_back(std::get<2>(t));
  return out;
}

void check_rows(const Array<float>& got, const std::vector<std::int64_t>& edge_of_entry) {
  REQUIRE(got.rows() == static_cast<std::int64_t>(edge_of_entry.size()));
  REQUIRE(got.cols() == 3);
  for (std::int64_t k = 0; k < got.rows(); ++k)
    for (std::int64_t c = 0; c < 3; ++c) {
      INFO("entry " << k << " column " << c);
      REQUIRE(got[k * 3 + c] == feature(edge_of_entry[static_cast<std::size_t>(k)], c));
    }
}

}  // namespace

TEST_CASE("read_ogb keeps each stored edge's features on its CSR entries, reversed copies and repeats included",
          "[datasets]") {
  ScratchDir scratch;
  const std::string dir = test::copy_fixture(scratch, "tiny");
  // tiny: (0,1) (0,2) (1,2) (2,3) (3,3) (2,1), add_inverse_edge: 1-2 appears four times, the loop twice.
  const std::vector<std::pair<std::int64_t, std::int64_t>> edges = {{0, 1}, {0, 2}, {1, 2}, {2, 3}, {3, 3}, {2, 1}};
  {
    std::ofstream f(dir + "/raw/edge-feat.csv");
    for (std::int64_t e = 0; e < 6; ++e) f << feature(e, 0) << ',' << feature(e, 1) << ',' << feature(e, 2) << '\n';
  }
  OgbReadOptions o;
  o.keep_edge_features = true;
  const Dataset ds = read_ogb(dir, o);
  check_rows(ds.edge_features, reference_edge_of_entry(edges, true));

  o.add_inverse_edge = false;
  check_rows(read_ogb(dir, o).edge_features, reference_edge_of_entry(edges, false));

  // Round trip through the dataset directory, and a damaged value found on open.
  write_dataset_dir(ds, scratch / "ds", false);
  check_rows(read_dataset_dir(scratch / "ds").edge_features, reference_edge_of_entry(edges, true));
  test::poke_listed<float>(scratch / "ds", "dataset.json", "graph/edge_feat.npy", 4,
                           std::numeric_limits<float>::quiet_NaN());
  CHECK_THROWS_WITH(read_dataset_dir(scratch / "ds"),
                    Catch::StartsWith(scratch / "ds/graph/edge_feat.npy: value at row 1, column 1 is "));
}

TEST_CASE("kept edge features are refused where they cannot follow the edges", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = test::copy_fixture(scratch, "tiny");
  OgbReadOptions o;
  o.keep_edge_features = true;
  CHECK_THROWS_WITH(read_ogb(dir, o), Catch::Contains("edge-feat.csv"));  // the fixture has none
  std::ofstream(dir + "/raw/edge-feat.csv") << "1\n2\n3\n4\n5\n6\n";
  o.to_undirected = true;
  CHECK_THROWS_WITH(read_ogb(dir, o), Catch::Contains("--keep-edge-features with --to-undirected"));

  // A CSR whose duplicates were merged no longer has one entry per listed edge.
  const std::vector<std::int32_t> src = {0, 1, 1}, dst = {1, 0, 0};
  graph::CooToCsrOptions merged;
  merged.drop_duplicates = true;
  const graph::CsrGraph g = graph::csr_from_coo<std::int32_t>(2, 2, dst.data(), src.data(), nullptr, 3, merged);
  Array<float> f = Array<float>::matrix(3, 1);
  for (std::int64_t e = 0; e < 3; ++e) f[e] = static_cast<float>(e);
  CHECK_THROWS_WITH(datasets::detail::edge_features_in_csr_order(g, src.data(), dst.data(), 3, false, f),
                    Catch::Contains("the CSR has 2 entries, the edge list 3"));
}
