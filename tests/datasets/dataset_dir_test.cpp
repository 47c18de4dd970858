// Tests of datasets/dataset_dir.*: round trips of homogeneous and heterogeneous datasets value by
// value, mapped arrays, dataset.json's listing, the size and checksum checks on open, and
// atomic, refusable output.
#include "datasets/dataset_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/checksum.hpp"
#include "datasets/npy.hpp"
#include "graph/base/error.hpp"
#include "tests/datasets/tiny_datasets.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::datasets;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Every array of `got` equals the one in `want` and, unless empty, maps a file.
template <class T>
void check_same(const Array<T>& got, const Array<T>& want) {
  CHECK(got.ndim() == want.ndim());
  CHECK(got.rows() == want.rows());
  CHECK(got.cols() == want.cols());
  CHECK(got.to_vector() == want.to_vector());
  if (!got.empty()) CHECK(got.is_mapped());
}

void check_same_graph(const graph::CsrGraph& got, const graph::CsrGraph& want) {
  CHECK(got.num_rows() == want.num_rows());
  CHECK(got.num_cols() == want.num_cols());
  REQUIRE(got.index_type() == want.index_type());
  CHECK(got.properties().sorted == want.properties().sorted);
  CHECK(got.properties().symmetric == want.properties().symmetric);
  check_same(got.indptr(), want.indptr());
  if (want.index_type() == graph::IndexType::i32) {
    check_same(got.indices<std::int32_t>(), want.indices<std::int32_t>());
  } else {
    check_same(got.indices<std::int64_t>(), want.indices<std::int64_t>());
  }
  CHECK(got.has_weights() == want.has_weights());
  check_same(got.weights(), want.weights());
}

void check_same_dataset(const Dataset& got, const Dataset& want) {
  CHECK(got.meta.name == want.meta.name);
  CHECK(got.meta.task == want.meta.task);
  CHECK(got.meta.num_classes == want.meta.num_classes);
  CHECK(got.meta.num_tasks == want.meta.num_tasks);
  CHECK(got.meta.split_name == want.meta.split_name);
  CHECK(got.meta.is_hetero == want.meta.is_hetero);
  CHECK(got.meta.target_type == want.meta.target_type);
  CHECK(got.meta.directed == want.meta.directed);
  CHECK(got.meta.source == want.meta.source);
  REQUIRE(got.node_types.size() == want.node_types.size());
  for (std::size_t t = 0; t < want.node_types.size(); ++t) {
    INFO("vertex type " << want.node_types[t].name);
    CHECK(got.node_types[t].name == want.node_types[t].name);
    CHECK(got.node_types[t].count == want.node_types[t].count);
    check_same(got.node_types[t].features, want.node_types[t].features);
    check_same(got.node_types[t].labels, want.node_types[t].labels);
  }
  if (want.meta.is_hetero) {
    REQUIRE(got.hetero.num_vertex_types() == want.hetero.num_vertex_types());
    for (int t = 0; t < want.hetero.num_vertex_types(); ++t) {
      CHECK(got.hetero.vertex_type_name(t) == want.hetero.vertex_type_name(t));
      CHECK(got.hetero.vertex_count(t) == want.hetero.vertex_count(t));
    }
    REQUIRE(got.hetero.num_relations() == want.hetero.num_relations());
    for (int r = 0; r < want.hetero.num_relations(); ++r) {
      INFO("relation " << want.hetero.relation_type(r).key());
      CHECK(got.hetero.relation_type(r) == want.hetero.relation_type(r));
      check_same_graph(got.hetero.relation(r), want.hetero.relation(r));
    }
  } else {
    check_same_graph(got.graph, want.graph);
  }
  check_same(got.split.train, want.split.train);
  check_same(got.split.valid, want.split.valid);
  check_same(got.split.test, want.split.test);
}

}  // namespace

TEST_CASE("write_dataset_dir then read_dataset_dir returns every value of a homogeneous dataset", "[dataset_dir]") {
  test::ScratchDir dir;
  struct Variant {
    bool int64_indices, weights, features, labels;
  };
  const Variant variants[] = {{false, true, true, true}, {true, false, false, false}, {true, true, false, true},
                              {false, false, true, false}};
  int k = 0;
  for (const Variant& v : variants) {
    INFO("int64 " << v.int64_indices << " weights " << v.weights << " features " << v.features << " labels " << v.labels);
    const std::string out = dir / ("ds" + std::to_string(k++));
    const Dataset ds = test::tiny_homogeneous(v.int64_indices, v.weights, v.features, v.labels);
    write_dataset_dir(ds, out, false);
    check_same_dataset(read_dataset_dir(out, {true}), ds);
    CHECK(fs::exists(out + "/graph/weights.npy") == v.weights);
    CHECK(fs::exists(out + "/node_feat.npy") == v.features);
    CHECK(fs::exists(out + "/node_label.npy") == v.labels);
    CHECK(read_npy_header(out + "/graph/indices.npy").dtype == (v.int64_indices ? DType::int64 : DType::int32));
  }
  // Nothing but the outputs themselves: no temporary files or folders are left.
  CHECK(entries(dir.path()) == std::vector<std::string>{"ds0", "ds1", "ds2", "ds3"});
}

TEST_CASE("a multilabel dataset keeps its 2-D labels through the directory", "[dataset_dir]") {
  test::ScratchDir dir;
  const Dataset ds = test::tiny_multilabel();
  write_dataset_dir(ds, dir / "ml", false);
  check_same_dataset(read_dataset_dir(dir / "ml"), ds);
}

TEST_CASE("write_dataset_dir then read_dataset_dir returns every value of a heterogeneous dataset", "[dataset_dir]") {
  test::ScratchDir dir;
  const Dataset ds = test::tiny_hetero();
  write_dataset_dir(ds, dir / "mag", false);
  CHECK(entries(dir / "mag") == std::vector<std::string>{"dataset.json", "nodes", "relations", "split"});
  CHECK(entries(dir / "mag/relations") == std::vector<std::string>{"author__writes__paper", "paper__cites__paper"});
  CHECK(entries(dir / "mag/relations/paper__cites__paper") == std::vector<std::string>{"indices.npy", "indptr.npy", "weights.npy"});
  CHECK(entries(dir / "mag/nodes") == std::vector<std::string>{"paper"});  // authors have no arrays
  CHECK(entries(dir / "mag/nodes/paper") == std::vector<std::string>{"node_feat.npy", "node_label.npy"});
  check_same_dataset(read_dataset_dir(dir / "mag", {true}), ds);
}

TEST_CASE("dataset.json lists counts and every file with its dtype, shape, size and CRC-32", "[dataset_dir]") {
  test::ScratchDir dir;
  write_dataset_dir(test::tiny_homogeneous(), dir / "ds", false);
  const nlohmann::json j = nlohmann::json::parse(read_text(dir / "ds/dataset.json"));
  CHECK(j["format"] == "halo-dataset");
  CHECK(j["format_version"] == 1);
  CHECK(j["orientation"] == "rows are destinations");
  CHECK(j["num_nodes"] == 4);
  CHECK(j["num_edges"] == 4);
  CHECK(j["task"] == "multiclass");
  CHECK(j["splits"] == nlohmann::json{{"train", 2}, {"valid", 1}, {"test", 1}});
  CHECK(j["node_types"][0]["feature_dim"] == 3);
  const std::vector<std::string> expected = {"graph/indices.npy", "graph/indptr.npy", "graph/weights.npy", "node_feat.npy",
                                             "node_label.npy", "split/test.npy", "split/train.npy", "split/valid.npy"};
  std::vector<std::string> listed;
  for (const auto& [path, entry] : j["files"].items()) {
    listed.push_back(path);
    const std::string file = dir / ("ds/" + path);
    CHECK(entry["bytes"] == fs::file_size(file));
    CHECK(entry["crc32"] == file_checksum(file));
  }
  std::sort(listed.begin(), listed.end());
  CHECK(listed == expected);
  CHECK(j["files"]["node_feat.npy"]["dtype"] == "float32");
  CHECK(j["files"]["node_feat.npy"]["shape"] == nlohmann::json{4, 3});

  const DatasetDirInfo info = read_dataset_dir_info(dir / "ds");
  CHECK(info.num_nodes == 4);
  CHECK(info.splits.train == 2);
  REQUIRE(info.files.size() == expected.size());
  std::uint64_t total = 0;
  for (const std::string& p : expected) total += fs::file_size(dir / ("ds/" + p));
  CHECK(info.total_bytes() == total);
  REQUIRE(info.find_file("graph/indptr.npy") != nullptr);
  CHECK(info.find_file("graph/indptr.npy")->shape == std::vector<std::int64_t>{5});
  CHECK(info.find_file("graph/indptr.npy")->dtype == DType::int64);
}

TEST_CASE("read_dataset_dir_info describes a heterogeneous dataset's types and relations", "[dataset_dir]") {
  test::ScratchDir dir;
  write_dataset_dir(test::tiny_hetero(), dir / "mag", false);
  const DatasetDirInfo info = read_dataset_dir_info(dir / "mag");
  CHECK(info.meta.is_hetero);
  CHECK(info.meta.target_type == "paper");
  CHECK(info.num_nodes == 5);
  CHECK(info.num_edges == 6);
  REQUIRE(info.node_types.size() == 2);
  CHECK(info.node_types[0].feature_dim == 2);
  CHECK(info.node_types[1].feature_dim == 0);
  REQUIRE(info.relations.size() == 2);
  CHECK(info.relations[0].type == graph::RelationType{"author", "writes", "paper"});
  CHECK(info.relations[0].num_edges == 3);
  CHECK(info.relations[1].properties.sorted);
}

TEST_CASE("the arrays of a dataset directory are plain .npy files", "[dataset_dir]") {
  test::ScratchDir dir;
  const Dataset ds = test::tiny_homogeneous();
  write_dataset_dir(ds, dir / "ds", false);
  CHECK(read_npy<float>(dir / "ds/node_feat.npy", 4, 3).to_vector() == ds.node_types[0].features.to_vector());
  CHECK(read_npy<std::int64_t>(dir / "ds/split/train.npy").to_vector() == std::vector<std::int64_t>{0, 2});
  CHECK(read_npy_header(dir / "ds/graph/indptr.npy").data_offset % 64 == 0);
}

TEST_CASE("read_dataset_dir detects a truncated or missing file without verifying", "[dataset_dir]") {
  test::ScratchDir dir;
  write_dataset_dir(test::tiny_homogeneous(), dir / "ds", false);
  const std::string indices = dir / "ds/graph/indices.npy";
  const auto size = fs::file_size(indices);
  fs::resize_file(indices, size - 4);
  CHECK_THROWS_WITH(read_dataset_dir(dir / "ds"), indices + ": is " + std::to_string(size - 4) + " bytes, dataset.json says " +
                                                      std::to_string(size) + " (truncated or replaced)");
  fs::remove(indices);
  CHECK_THROWS_WITH(read_dataset_dir(dir / "ds"), Catch::StartsWith(indices + ": is missing"));
}

TEST_CASE("read_dataset_dir refuses an unknown format_version or a foreign dataset.json", "[dataset_dir]") {
  test::ScratchDir dir;
  write_dataset_dir(test::tiny_homogeneous(), dir / "ds", false);
  const std::string json_path = dir / "ds/dataset.json";
  nlohmann::json j = nlohmann::json::parse(read_text(json_path));
  j["format_version"] = 2;
  write_text(json_path, j.dump());
  CHECK_THROWS_WITH(read_dataset_dir(dir / "ds"),
                    json_path + ": format_version 2 is not supported: this build of halo reads version 1 only");
  j["format_version"] = 1;
  j["format"] = "something-else";
  write_text(json_path, j.dump());
  CHECK_THROWS_WITH(read_dataset_dir(dir / "ds"), Catch::Contains("is not a halo dataset"));
  j["format"] = "halo-dataset";
  j.erase("num_nodes");
  write_text(json_path, j.dump());
  CHECK_THROWS_WITH(read_dataset_dir_info(dir / "ds"), json_path + ": lacks the key 'num_nodes'");
  j["num_nodes"] = 4;
  j["files"]["../escape.npy"] = j["files"]["node_feat.npy"];
  write_text(json_path, j.dump());
  CHECK_THROWS_WITH(read_dataset_dir_info(dir / "ds"), Catch::Contains("leaves the dataset directory"));
  write_text(json_path, "{not json");
  CHECK_THROWS_WITH(read_dataset_dir_info(dir / "ds"), Catch::Contains("is not valid JSON"));
  // Found by fuzz/dataset_json_fuzzer: a number too large for a double escaped as nlohmann's
  // out_of_range, not a halo error.
  write_text(json_path, "3E5353");
  CHECK_THROWS_AS(read_dataset_dir_info(dir / "ds"), halo::IoError);
  CHECK_THROWS_WITH(read_dataset_dir_info(dir / "ds"), Catch::Contains("is not valid JSON"));
  fs::remove(json_path);
  CHECK_THROWS_WITH(read_dataset_dir(dir / "ds"), Catch::StartsWith(json_path + ": cannot open"));
}

TEST_CASE("read_dataset_dir refuses a file whose header disagrees with dataset.json", "[dataset_dir]") {
  test::ScratchDir dir;
  write_dataset_dir(test::tiny_homogeneous(), dir / "ds", false);
  // Same size, other shape: swap in a 3 x 4 feature file for the 4 x 3 one.
  auto other = Array<float>::matrix(3, 4);
  for (float& x : other) x = 1.0f;
  write_npy(dir / "ds/node_feat.npy", other);
  DatasetDirOptions no_crc;  // the checksum would catch it first
  no_crc.verify_checksums = false;
  CHECK_THROWS_WITH(read_dataset_dir(dir / "ds", no_crc), Catch::Contains("node_feat.npy: has shape (3, 4), expected 4 rows and 3 columns"));
}

TEST_CASE("write_dataset_dir refuses an existing directory unless forced, and then replaces it", "[dataset_dir]") {
  test::ScratchDir dir;
  const std::string out = dir / "ds";
  write_dataset_dir(test::tiny_homogeneous(), out, false);
  CHECK_THROWS_WITH(write_dataset_dir(test::tiny_hetero(), out, false), out + ": exists (use --force to replace it)");
  CHECK_FALSE(read_dataset_dir(out).meta.is_hetero);  // untouched
  write_dataset_dir(test::tiny_hetero(), out, true);
  check_same_dataset(read_dataset_dir(out, {true}), test::tiny_hetero());
  CHECK_FALSE(fs::exists(out + "/graph"));
  CHECK(entries(dir.path()) == std::vector<std::string>{"ds"});
}

TEST_CASE("write_dataset_dir leaves nothing behind when the dataset is invalid", "[dataset_dir]") {
  test::ScratchDir dir;
  Dataset bad_label = test::tiny_homogeneous();
  bad_label.node_types[0].labels[0] = 7;
  CHECK_THROWS_AS(write_dataset_dir(bad_label, dir / "out/ds", false), InvalidArgument);
  Dataset bad_name = test::tiny_hetero();
  bad_name.node_types[1].name = "a/b";
  CHECK_THROWS_AS(write_dataset_dir(bad_name, dir / "out/ds", false), InvalidArgument);
  CHECK(entries(dir / "out").empty());

  // An invalid replacement keeps the old directory.
  write_dataset_dir(test::tiny_homogeneous(), dir / "out/ds", false);
  CHECK_THROWS_AS(write_dataset_dir(bad_label, dir / "out/ds", true), InvalidArgument);
  check_same_dataset(read_dataset_dir(dir / "out/ds"), test::tiny_homogeneous());
  CHECK(entries(dir / "out") == std::vector<std::string>{"ds"});
}

TEST_CASE("write_dataset_dir skips the pass over the features only when told they were checked", "[dataset_dir]") {
  test::ScratchDir dir;
  Dataset ds = test::tiny_homogeneous();
  ds.node_types[0].features[5] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(write_dataset_dir(ds, dir / "checked", false), Catch::Contains("is not finite"));
  CHECK_FALSE(fs::exists(dir / "checked"));
  // A reader that refused non-finite values says so; the shape is still checked. (Reading the
  // directory back refuses the NaN.)
  write_dataset_dir(ds, dir / "trusted", false, FeatureValues::already_checked);
  const Array<float> written = read_npy<float>(dir / "trusted/node_feat.npy", 4, 3);
  CHECK(std::isnan(written[5]));
  CHECK_THROWS_WITH(read_dataset_dir(dir / "trusted"), Catch::Contains("node_feat.npy: value at row 1, column 2 is nan"));
  Dataset short_features = test::tiny_homogeneous();
  short_features.node_types[0].features = Array<float>::matrix(2, 3);
  CHECK_THROWS_WITH(write_dataset_dir(short_features, dir / "short", false, FeatureValues::already_checked),
                    Catch::Contains("rows, expected"));
}

TEST_CASE("write_dataset_dir refuses relations whose folder names collide", "[dataset_dir]") {
  test::ScratchDir dir;
  Dataset ds = test::tiny_hetero();
  ds.hetero.add_vertex_type("a__b", 1);
  ds.hetero.add_vertex_type("a", 1);
  ds.hetero.add_vertex_type("b__c", 1);
  ds.hetero.add_vertex_type("c", 1);
  auto one_edge = [] {
    return graph::CsrGraph(1, 1, Array<std::int64_t>::from_vector({0, 1}), Array<std::int32_t>::from_vector({0}));
  };
  ds.hetero.add_relation({"a__b", "c", "a"}, one_edge());
  ds.hetero.add_relation({"a", "b__c", "a"}, one_edge());
  for (const char* name : {"a__b", "a", "b__c", "c"}) {
    NodeType t;
    t.name = name;
    t.count = 1;
    ds.node_types.push_back(std::move(t));
  }
  CHECK_THROWS_WITH(write_dataset_dir(ds, dir / "ds", false), Catch::Contains("share the folder name 'a__b__c__a'"));
  CHECK(entries(dir.path()).empty());
}
