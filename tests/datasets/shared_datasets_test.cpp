// read_ogb on the real datasets in ../shared/datasets (converted to OGB's layout; see their
// README and meta.json): counts, feature sums and a few values checked against the files.
// Skipped, with a warning, when the folder is absent.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "datasets/ogb_reader.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::datasets;

namespace {

// The folder of a shared dataset, or "" (after a warning) when the shared folder is absent.
std::string shared(const std::string& name) {
  const std::string root = halo::test::shared_datasets_dir();
  if (root.empty()) {
    halo::test::mark_skipped();
    WARN("skipped: ../shared/datasets is absent");
    return std::string();
  }
  return root + "/" + name;
}

double sum_of(const Array<float>& x) {
  double s = 0;
  for (float v : x) s += v;
  return s;
}

std::int64_t count_of(const Array<std::int64_t>& y, std::int64_t value) {
  std::int64_t n = 0;
  for (std::int64_t v : y) n += v == value;
  return n;
}

// True when the CSR row holds `col` (an edge col -> row).
bool has_entry(const graph::CsrGraph& g, std::int64_t row, std::int64_t col) {
  return graph::visit(g, [&](auto v) {
    for (std::int64_t k = v.indptr[row]; k < v.indptr[row + 1]; ++k)
      if (v.indices[k] == col) return true;
    return false;
  });
}

}  // namespace

TEST_CASE("read_ogb reads cora: 2708 vertices, 10556 directed edges, 1433 features, 7 classes", "[datasets]") {
  const std::string dir = shared("cora");
  if (dir.empty()) return;
  const Dataset ds = read_ogb(dir);
  CHECK(ds.meta.name == "cora");
  CHECK(ds.num_vertices() == 2708);
  CHECK(ds.graph.num_edges() == 10556);
  CHECK_FALSE(ds.meta.directed);
  // Stored row "0,633" and its inverse.
  CHECK(has_entry(ds.graph, 633, 0));
  CHECK(has_entry(ds.graph, 0, 633));
  const NodeType& node = ds.node_types[0];
  CHECK(node.features.cols() == 1433);
  CHECK(sum_of(node.features) == 49216);  // the 0/1 bag of words has 49216 ones
  const std::vector<int> row0_ones = {19, 81, 146, 315, 774, 877, 1194, 1247, 1274};
  double row0 = 0;
  for (int c : row0_ones) row0 += node.features.row(0)[c];
  CHECK(row0 == 9);
  CHECK(ds.meta.num_classes == 7);
  CHECK(node.labels[0] == 3);
  CHECK(node.labels[1] == 4);
  CHECK(ds.split.train.size() == 140);
  CHECK(ds.split.valid.size() == 500);
  CHECK(ds.split.test.size() == 1000);
  CHECK(ds.meta.split_name == "planetoid");
}

TEST_CASE("read_ogb reads citeseer with its 15 unlabelled vertices as -1", "[datasets]") {
  const std::string dir = shared("citeseer");
  if (dir.empty()) return;
  const Dataset ds = read_ogb(dir);
  CHECK(ds.num_vertices() == 3327);
  CHECK(ds.graph.num_edges() == 9104);
  CHECK(ds.node_types[0].features.cols() == 3703);
  CHECK(sum_of(ds.node_types[0].features) == 105165);
  CHECK(ds.meta.num_classes == 6);
  CHECK(count_of(ds.node_types[0].labels, -1) == 15);
  CHECK(ds.node_types[0].labels[2407] == -1);
  CHECK(ds.split.train.size() == 120);
  CHECK(ds.split.valid.size() == 500);
  CHECK(ds.split.test.size() == 1000);
}

TEST_CASE("read_ogb reads actor as a directed graph with the geom_gcn_0 split", "[datasets]") {
  const std::string dir = shared("actor");
  if (dir.empty()) return;
  const Dataset ds = read_ogb(dir);
  CHECK(ds.num_vertices() == 7600);
  CHECK(ds.graph.num_edges() == 30019);
  CHECK(ds.meta.directed);
  CHECK(has_entry(ds.graph, 812, 0));  // stored row "0,812", kept one way
  CHECK(ds.node_types[0].features.cols() == 932);
  CHECK(sum_of(ds.node_types[0].features) == 40977);
  CHECK(ds.meta.num_classes == 5);
  CHECK(ds.meta.split_name == "geom_gcn_0");
  CHECK(ds.split.train.size() == 3648);
  CHECK(ds.split.valid.size() == 2432);
  CHECK(ds.split.test.size() == 1520);
}

TEST_CASE("read_ogb reads acm: papers, authors and subjects with the heco_20 split", "[datasets]") {
  const std::string dir = shared("acm");
  if (dir.empty()) return;
  const Dataset ds = read_ogb(dir);
  CHECK(ds.meta.is_hetero);
  CHECK(ds.node_type("paper").count == 4019);
  CHECK(ds.node_type("author").count == 7167);
  CHECK(ds.node_type("subject").count == 60);
  const int writes = ds.hetero.find_relation({"author", "writes", "paper"});
  const int has_subject = ds.hetero.find_relation({"paper", "has_subject", "subject"});
  REQUIRE(writes >= 0);
  REQUIRE(has_subject >= 0);
  CHECK(ds.hetero.relation(writes).num_edges() == 13407);
  CHECK(ds.hetero.relation(has_subject).num_edges() == 4019);
  CHECK(has_entry(ds.hetero.relation(writes), 364, 0));  // stored row "0,364": author 0 wrote paper 364
  CHECK(ds.node_type("paper").features.cols() == 1902);
  CHECK(sum_of(ds.node_type("paper").features) == 340377);
  CHECK(ds.node_type("author").features.empty());
  CHECK(ds.meta.target_type == "paper");
  CHECK(ds.meta.num_classes == 3);
  CHECK(ds.node_type("paper").labels[0] == 2);
  CHECK(ds.meta.split_name == "heco_20");
  CHECK(ds.split.train.size() == 60);
  CHECK(ds.split.valid.size() == 1000);
  CHECK(ds.split.test.size() == 1000);
}

TEST_CASE("read_ogb reads dblp: labels on authors, features on three of four types", "[datasets]") {
  const std::string dir = shared("dblp");
  if (dir.empty()) return;
  const Dataset ds = read_ogb(dir);
  CHECK(ds.node_type("author").count == 4057);
  CHECK(ds.node_type("paper").count == 14328);
  CHECK(ds.node_type("term").count == 7723);
  CHECK(ds.node_type("conference").count == 20);
  CHECK(ds.hetero.num_relations() == 3);
  CHECK(ds.num_edges() == 19645 + 14328 + 85810);
  CHECK(ds.meta.target_type == "author");
  CHECK(ds.meta.num_classes == 4);
  CHECK(ds.node_type("author").labels[2] == 3);
  CHECK(ds.node_type("author").features.cols() == 334);
  CHECK(sum_of(ds.node_type("author").features) == 48810);
  CHECK(ds.node_type("paper").features.cols() == 4231);
  CHECK(sum_of(ds.node_type("paper").features) == 95962);
  const Array<float>& term = ds.node_type("term").features;
  CHECK(term.cols() == 50);
  CHECK(term.row(0)[0] == -0.69241f);
  CHECK(term.row(0)[2] == 1.154f);
  CHECK(term.row(7722)[49] == -0.49489f);
  CHECK(ds.node_type("conference").features.empty());
  CHECK(ds.split.train.size() == 80);
  CHECK(ds.split.valid.size() == 1000);
  CHECK(ds.split.test.size() == 1000);
}
