// Tests of datasets/ogb_hetero_reader.cpp: the ogbn-mag style layout (typed counts with a header
// row, one edge list per triplet, per-type features and labels, the split of one type), and its
// malformed fixtures.
#include <catch2/catch.hpp>

#include <filesystem>
#include <vector>

#include "datasets/ogb_reader.hpp"
#include "graph/base/error.hpp"
#include "tests/datasets/ogb_fixture.hpp"
#include "tests/support/csr_rows.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::datasets;
using namespace halo::test;
using Catch::Contains;

namespace {

const graph::CsrGraph& relation(const Dataset& ds, const std::string& src, const std::string& rel, const std::string& dst) {
  const int r = ds.hetero.find_relation({src, rel, dst});
  REQUIRE(r >= 0);
  return ds.hetero.relation(r);
}

}  // namespace

// tests/data/ogb/tiny_hetero:
//   author a0 writes p0, p1; a1 writes p1; a2 writes p3
//   p1 -> p0, p2 -> p0, p3 -> p1, p3 -> p2   (cites)
//   p0, p1, p3 -> f0; p2, p3 -> f1            (has_topic)
TEST_CASE("read_ogb reads a heterogeneous dataset with one CSR per triplet, rows = destination type", "[datasets]") {
  const Dataset ds = read_ogb(ogb_fixture("tiny_hetero"));
  CHECK(ds.meta.is_hetero);
  CHECK(ds.meta.name == "tiny-hetero");
  CHECK(ds.hetero.num_vertex_types() == 3);
  CHECK(ds.hetero.vertex_type_name(0) == "author");  // sorted, as OGB sorts them
  CHECK(ds.hetero.vertex_count(ds.hetero.vertex_type("paper")) == 4);
  CHECK(ds.hetero.num_relations() == 3);
  CHECK(ds.hetero.relation_type(0).key() == "author__writes__paper");
  CHECK(rows_of(relation(ds, "author", "writes", "paper")) == CsrRows{{0}, {0, 1}, {}, {2}});
  CHECK(rows_of(relation(ds, "paper", "cites", "paper")) == CsrRows{{1, 2}, {3}, {3}, {}});
  CHECK(rows_of(relation(ds, "paper", "has_topic", "field")) == CsrRows{{0, 1, 3}, {2, 3}});
  CHECK(relation(ds, "paper", "has_topic", "field").num_cols() == 4);
  CHECK(ds.num_edges() == 13);
  CHECK(ds.meta.directed);
}

TEST_CASE("read_ogb reads per-type features, the labelled type and its split", "[datasets]") {
  const Dataset ds = read_ogb(ogb_fixture("tiny_hetero"));
  REQUIRE(ds.node_types.size() == 3);
  const NodeType& paper = ds.node_type("paper");
  CHECK(paper.features.cols() == 2);
  CHECK(paper.features.to_vector() == std::vector<float>{0.5f, -1.25f, 1e-3f, 2.f, -0.f, 3.75f, 100.5f, 0.125f});
  CHECK(ds.node_type("field").features.to_vector() == std::vector<float>{7.f, 9.f});
  CHECK(ds.node_type("author").features.empty());
  CHECK(ds.node_type("author").labels.empty());
  CHECK(paper.labels.to_vector() == std::vector<std::int64_t>{0, 2, 1, 0});
  CHECK(ds.meta.target_type == "paper");
  CHECK(ds.target().name == "paper");
  CHECK(ds.meta.num_classes == 3);
  CHECK(ds.meta.split_name == "time");
  CHECK(ds.split.train.to_vector() == std::vector<std::int64_t>{0, 1});
  CHECK(ds.split.test.to_vector() == std::vector<std::int64_t>{3});
}

TEST_CASE("read_ogb makes same-type relations undirected and adds reverse relations on request", "[datasets]") {
  OgbReadOptions options;
  options.to_undirected = true;
  options.add_reverse_relations = true;
  const Dataset ds = read_ogb(ogb_fixture("tiny_hetero"), options);
  CHECK(rows_of(relation(ds, "paper", "cites", "paper")) == CsrRows{{1, 2}, {0, 3}, {0, 3}, {1, 2}});
  // Relations between two types stay as stored; their reverses are the transposes.
  CHECK(rows_of(relation(ds, "author", "writes", "paper")) == CsrRows{{0}, {0, 1}, {}, {2}});
  CHECK(rows_of(relation(ds, "paper", "rev_writes", "author")) == CsrRows{{0, 1}, {1}, {3}});
  CHECK(rows_of(relation(ds, "field", "rev_has_topic", "paper")) == CsrRows{{0}, {0}, {1}, {0, 1}});
  CHECK(ds.hetero.num_relations() == 6);
  CHECK_FALSE(ds.meta.directed);
}

TEST_CASE("read_ogb detects the heterogeneous layout and infers what no metadata gives", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny_hetero");
  std::filesystem::remove(dir + "/meta.json");
  // paper___cites___paper joins a type to itself, so add_inverse_edge must be given.
  CHECK_THROWS_WITH(read_ogb(dir), Contains("OgbReadOptions::add_inverse_edge"));
  OgbReadOptions options;
  options.add_inverse_edge = false;
  const Dataset ds = read_ogb(dir, options);
  CHECK(ds.meta.is_hetero);
  CHECK(ds.meta.num_classes == 3);  // max label 2 + 1
  CHECK(ds.meta.split_name == "time");
}

TEST_CASE("read_ogb refuses add_inverse_edge on a relation between two types", "[datasets]") {
  OgbReadOptions options;
  options.add_inverse_edge = true;
  CHECK_THROWS_WITH(read_ogb(ogb_fixture("tiny_hetero"), options), Contains("author___writes___paper"));
}

TEST_CASE("read_ogb reports a relation edge to a vertex past its type's count", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "hetero_edge_out_of_range", "tiny_hetero");
  CHECK(e.file() == copied_file(scratch, "raw/relations/author___writes___paper/edge.csv.gz"));
  CHECK(e.line() == 4);
  CHECK_THAT(e.what(), Contains("destination ('paper') vertex 4") && Contains("num-node-dict.csv.gz"));
}

TEST_CASE("read_ogb reports a relation's fault when a feature file, read beside the relations, has one too", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny_hetero", "hetero_feature_rows");
  const std::string edges = "raw/relations/author___writes___paper/edge.csv.gz";
  std::filesystem::copy_file(ogb_fixture("malformed/hetero_edge_out_of_range/" + edges), dir + "/" + edges,
                             std::filesystem::copy_options::overwrite_existing);
  for (int i = 0; i < 20; ++i) {  // whichever thread fails first
    const IoError e = ogb_io_error(dir);
    CHECK(e.file() == copied_file(scratch, edges));
    CHECK(e.line() == 4);
  }
}

TEST_CASE("read_ogb reports a relation whose edge rows disagree with its num-edge-list", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "hetero_edge_rows", "tiny_hetero");
  CHECK(e.file() == copied_file(scratch, "raw/relations/paper___cites___paper/edge.csv.gz"));
  CHECK(e.line() == 5);
  CHECK_THAT(e.what(), Contains("ends after 4 rows"));
}

TEST_CASE("read_ogb reports a type's feature rows that disagree with num-node-dict", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "hetero_feature_rows", "tiny_hetero");
  CHECK(e.file() == copied_file(scratch, "raw/node-feat/paper/node-feat.csv.gz"));
  CHECK(e.line() == 4);
  CHECK_THAT(e.what(), Contains("num-node-dict.csv.gz gives 'paper' 4"));
}

TEST_CASE("read_ogb reports a triplet naming an unknown node type", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "hetero_unknown_type", "tiny_hetero");
  CHECK(e.file() == copied_file(scratch, "raw/triplet-type-list.csv.gz"));
  CHECK(e.line() == 2);
  CHECK_THAT(e.what(), Contains("'book'"));
}
