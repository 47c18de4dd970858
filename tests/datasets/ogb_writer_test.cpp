// Tests of datasets/ogb_writer.* and datasets/detail/csv_gz_writer.*: the exact files and text of
// tiny hand-drawn datasets, gzip members and headers, float printing, thread-count independence,
// and the refusals.
#include "datasets/ogb_writer.hpp"

#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "datasets/detail/csv_gz_writer.hpp"
#include "datasets/synth.hpp"
#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/thread_count.hpp"

using namespace halo;
using namespace halo::datasets;
namespace fs = std::filesystem;
namespace gz = halo::datasets::detail;

namespace {

// The decompressed text of a gzip file, read with zlib's gzread (which reads every member).
std::string gz_text(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string text;
  char buffer[1 << 14];
  int n = 0;
  while ((n = gzread(f, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  REQUIRE(n == 0);
  gzclose(f);
  return text;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every regular file under `dir`, as paths relative to it.
std::set<std::string> files_under(const std::string& dir) {
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) files.insert(fs::relative(entry.path(), dir).string());
  return files;
}

// The number of gzip members in a file: inflate member after member until the input ends.
int count_members(const std::string& bytes) {
  int members = 0;
  std::size_t at = 0;
  std::vector<unsigned char> out(1 << 16);
  while (at < bytes.size()) {
    z_stream z{};
    REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + at));
    z.avail_in = static_cast<uInt>(bytes.size() - at);
    int rc = Z_OK;
    while (rc == Z_OK) {
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      rc = inflate(&z, Z_NO_FLUSH);
    }
    REQUIRE(rc == Z_STREAM_END);
    at = bytes.size() - z.avail_in;
    inflateEnd(&z);
    ++members;
  }
  return members;
}

Array<float> floats(std::int64_t rows, std::int64_t cols, const std::vector<float>& values) {
  Array<float> a = Array<float>::matrix(rows, cols);
  std::copy(values.begin(), values.end(), a.data());
  return a;
}

//   0 --- 1      vertex: features            label
//   |            0:  0.1, -2.5                 0
//   2 --- 3      1:  1e-05, 3                  1
//                2:  1/3, 100                  0
//                3:  -0, 16777216              1
// split "handmade": train {0, 1}, valid {2}, test {3}
Dataset tiny_homogeneous() {
  Dataset ds;
  ds.meta.name = "tiny";
  ds.meta.num_classes = 2;
  ds.meta.split_name = "handmade";
  ds.meta.target_type = "node";
  ds.meta.source = "drawn by hand";
  const std::vector<std::int32_t> src = {0, 0, 2}, dst = {1, 2, 3};
  graph::CooToCsrOptions symmetric;
  symmetric.symmetrize = true;
  ds.graph = graph::csr_from_coo<std::int32_t>(4, 4, dst.data(), src.data(), nullptr, 3, symmetric);
  NodeType node;
  node.name = "node";
  node.count = 4;
  node.features = floats(4, 2, {0.1f, -2.5f, 1e-5f, 3.0f, 1.0f / 3.0f, 100.0f, -0.0f, 16777216.0f});
  node.labels = Array<std::int64_t>::from_vector({0, 1, 0, 1});
  ds.node_types.push_back(std::move(node));
  ds.split.train = Array<std::int64_t>::from_vector({0, 1});
  ds.split.valid = Array<std::int64_t>::from_vector({2});
  ds.split.test = Array<std::int64_t>::from_vector({3});
  return ds;
}

// paper: 3 vertices with features and labels; author: 2 vertices, nothing attached.
//   author 0 writes paper 0 and paper 1, author 1 writes paper 2   (author___writes___paper)
//   paper 1 cites paper 0                                          (paper___cites___paper)
// split "time" over papers: train {0}, valid {1}, test {2}
Dataset tiny_heterogeneous() {
  Dataset ds;
  ds.meta.name = "tiny-hetero";
  ds.meta.num_classes = 3;
  ds.meta.split_name = "time";
  ds.meta.is_hetero = true;
  ds.meta.directed = true;
  ds.meta.target_type = "paper";
  ds.hetero.add_vertex_type("paper", 3);
  ds.hetero.add_vertex_type("author", 2);
  const std::vector<std::int32_t> writes_src = {0, 0, 1}, writes_dst = {0, 1, 2};
  ds.hetero.add_relation({"author", "writes", "paper"},
                         graph::csr_from_coo<std::int32_t>(3, 2, writes_dst.data(), writes_src.data(), nullptr, 3));
  const std::vector<std::int32_t> cites_src = {1}, cites_dst = {0};
  ds.hetero.add_relation({"paper", "cites", "paper"},
                         graph::csr_from_coo<std::int32_t>(3, 3, cites_dst.data(), cites_src.data(), nullptr, 1));
  NodeType paper;
  paper.name = "paper";
  paper.count = 3;
  paper.features = floats(3, 2, {1.5f, -1.0f, 0.25f, 2.0f, 1e-30f, 7.0f});
  paper.labels = Array<std::int64_t>::from_vector({2, 0, 1});
  NodeType author;
  author.name = "author";
  author.count = 2;
  ds.node_types.push_back(std::move(paper));
  ds.node_types.push_back(std::move(author));
  ds.split.train = Array<std::int64_t>::from_vector({0});
  ds.split.valid = Array<std::int64_t>::from_vector({1});
  ds.split.test = Array<std::int64_t>::from_vector({2});
  return ds;
}

}  // namespace

TEST_CASE("write_ogb writes a homogeneous dataset as OGB's raw layout", "[datasets]") {
  test::ScratchDir tmp;
  const std::string dir = tmp / "tiny";
  write_ogb(tiny_homogeneous(), dir);
  CHECK(files_under(dir) == std::set<std::string>{"RELEASE_v1.txt", "meta.json", "raw/edge.csv.gz",
                                                  "raw/num-node-list.csv.gz", "raw/num-edge-list.csv.gz",
                                                  "raw/node-feat.csv.gz", "raw/node-label.csv.gz",
                                                  "split/handmade/train.csv.gz", "split/handmade/valid.csv.gz",
                                                  "split/handmade/test.csv.gz"});
  // CSR order: row (destination) 0 holds sources 1 and 2, and so on.
  CHECK(gz_text(dir + "/raw/edge.csv.gz") == "1,0\n2,0\n0,1\n0,2\n3,2\n2,3\n");
  CHECK(gz_text(dir + "/raw/num-node-list.csv.gz") == "4\n");
  CHECK(gz_text(dir + "/raw/num-edge-list.csv.gz") == "6\n");
  CHECK(gz_text(dir + "/raw/node-feat.csv.gz") == "0.1,-2.5\n1e-05,3\n0.33333334,100\n-0,16777216\n");
  CHECK(gz_text(dir + "/raw/node-label.csv.gz") == "0\n1\n0\n1\n");
  CHECK(gz_text(dir + "/split/handmade/train.csv.gz") == "0\n1\n");
  CHECK(gz_text(dir + "/split/handmade/valid.csv.gz") == "2\n");
  CHECK(gz_text(dir + "/split/handmade/test.csv.gz") == "3\n");
  CHECK(file_bytes(dir + "/RELEASE_v1.txt").rfind("# Release note for tiny\n", 0) == 0);

  const auto meta = nlohmann::json::parse(file_bytes(dir + "/meta.json"));
  CHECK(meta["num tasks"] == "1");
  CHECK(meta["num classes"] == "2");
  CHECK(meta["eval metric"] == "acc");
  CHECK(meta["task type"] == "multiclass classification");
  CHECK(meta["add_inverse_edge"] == "False");
  CHECK(meta["has_node_attr"] == "True");
  CHECK(meta["has_edge_attr"] == "False");
  CHECK(meta["split"] == "handmade");
  CHECK(meta["is hetero"] == "False");
  CHECK(meta["binary"] == "False");
  CHECK(meta["num_nodes"] == 4);
  CHECK(meta["num_edges_stored"] == 6);
  CHECK(meta["source"] == "drawn by hand");
}

TEST_CASE("write_ogb with add_inverse_edge stores each undirected pair once, sorted", "[datasets]") {
  test::ScratchDir tmp;
  OgbWriteOptions o;
  o.add_inverse_edge = true;
  o.split_name = "other";
  const Dataset ds = tiny_homogeneous();
  write_ogb(ds, tmp / "claimed", o);
  CHECK(gz_text(tmp / "claimed/raw/edge.csv.gz") == "0,1\n0,2\n2,3\n");
  CHECK(gz_text(tmp / "claimed/raw/num-edge-list.csv.gz") == "3\n");
  CHECK(fs::exists(tmp / "claimed/split/other/train.csv.gz"));
  const auto meta = nlohmann::json::parse(file_bytes(tmp / "claimed/meta.json"));
  CHECK(meta["add_inverse_edge"] == "True");
  CHECK(meta["split"] == "other");
  CHECK(meta["num_edges_after_add_inverse_edge"] == 6);

  // The same structure without the symmetry claim is checked, then written the same way.
  Dataset unclaimed = tiny_homogeneous();
  unclaimed.graph = graph::CsrGraph(4, 4, ds.graph.indptr().clone(), ds.graph.indices<std::int32_t>().clone());
  REQUIRE_FALSE(unclaimed.graph.properties().symmetric);
  write_ogb(unclaimed, tmp / "unclaimed", o);
  CHECK(file_bytes(tmp / "unclaimed/raw/edge.csv.gz") == file_bytes(tmp / "claimed/raw/edge.csv.gz"));
}

TEST_CASE("write_ogb refuses add_inverse_edge for a graph that is not symmetric", "[datasets]") {
  test::ScratchDir tmp;
  Dataset ds = tiny_homogeneous();
  // 0 -> 1 only: row 1 holds column 0, row 0 is empty.
  ds.graph = graph::CsrGraph(4, 4, Array<std::int64_t>::from_vector({0, 0, 1, 1, 1}),
                             Array<std::int32_t>::from_vector({0}));
  OgbWriteOptions o;
  o.add_inverse_edge = true;
  CHECK_THROWS_WITH(write_ogb(ds, tmp / "out", o), Catch::Contains("symmetric"));
  CHECK_FALSE(fs::exists(tmp / "out"));
  // Written as a directed graph it is fine.
  write_ogb(ds, tmp / "out");
  CHECK(gz_text(tmp / "out/raw/edge.csv.gz") == "0,1\n");
}

TEST_CASE("write_ogb writes a heterogeneous dataset as ogbn-mag's raw layout", "[datasets]") {
  test::ScratchDir tmp;
  const std::string dir = tmp / "hetero";
  write_ogb(tiny_heterogeneous(), dir);
  const std::string writes = "raw/relations/author___writes___paper/", cites = "raw/relations/paper___cites___paper/";
  CHECK(files_under(dir) ==
        std::set<std::string>{"RELEASE_v1.txt", "meta.json", "raw/num-node-dict.csv.gz",
                              "raw/triplet-type-list.csv.gz", writes + "edge.csv.gz", writes + "num-edge-list.csv.gz",
                              cites + "edge.csv.gz", cites + "num-edge-list.csv.gz", "raw/nodetype-has-feat.csv.gz",
                              "raw/nodetype-has-label.csv.gz", "raw/node-feat/paper/node-feat.csv.gz",
                              "raw/node-label/paper/node-label.csv.gz", "split/time/nodetype-has-split.csv.gz",
                              "split/time/paper/train.csv.gz", "split/time/paper/valid.csv.gz",
                              "split/time/paper/test.csv.gz"});
  CHECK(gz_text(dir + "/raw/num-node-dict.csv.gz") == "paper,author\n3,2\n");
  CHECK(gz_text(dir + "/raw/triplet-type-list.csv.gz") == "author,writes,paper\npaper,cites,paper\n");
  CHECK(gz_text(dir + "/" + writes + "edge.csv.gz") == "0,0\n0,1\n1,2\n");
  CHECK(gz_text(dir + "/" + writes + "num-edge-list.csv.gz") == "3\n");
  CHECK(gz_text(dir + "/" + cites + "edge.csv.gz") == "1,0\n");
  CHECK(gz_text(dir + "/" + cites + "num-edge-list.csv.gz") == "1\n");
  CHECK(gz_text(dir + "/raw/nodetype-has-feat.csv.gz") == "paper,author\nTrue,False\n");
  CHECK(gz_text(dir + "/raw/nodetype-has-label.csv.gz") == "paper,author\nTrue,False\n");
  CHECK(gz_text(dir + "/raw/node-feat/paper/node-feat.csv.gz") == "1.5,-1\n0.25,2\n1e-30,7\n");
  CHECK(gz_text(dir + "/raw/node-label/paper/node-label.csv.gz") == "2\n0\n1\n");
  CHECK(gz_text(dir + "/split/time/nodetype-has-split.csv.gz") == "paper,author\nTrue,False\n");
  CHECK(gz_text(dir + "/split/time/paper/train.csv.gz") == "0\n");
  CHECK(gz_text(dir + "/split/time/paper/valid.csv.gz") == "1\n");
  CHECK(gz_text(dir + "/split/time/paper/test.csv.gz") == "2\n");
  const auto meta = nlohmann::json::parse(file_bytes(dir + "/meta.json"));
  CHECK(meta["is hetero"] == "True");
  CHECK(meta["add_inverse_edge"] == "False");
  CHECK(meta["split"] == "time");
  CHECK(meta["num classes"] == "3");
  CHECK(meta["num_nodes_dict"]["author"] == 2);
  CHECK(meta["num_edges_dict"]["author___writes___paper"] == 3);
  CHECK(meta["target_node_type"] == "paper");
}

TEST_CASE("write_csv_gz writes one gzip member per chunk, with mtime 0, read back whole", "[datasets]") {
  test::ScratchDir tmp;
  const std::string path = tmp / "rows.csv.gz";
  const auto format = [](std::int64_t b, std::int64_t e, std::string& out) {
    for (std::int64_t i = b; i < e; ++i) out += std::to_string(i * i) + "," + std::to_string(-i) + "\n";
  };
  gz::write_csv_gz(path, 10, 3, 6, format);
  std::string expected;
  format(0, 10, expected);
  CHECK(gz_text(path) == expected);
  const std::string bytes = file_bytes(path);
  CHECK(count_members(bytes) == 4);  // rows 0-2, 3-5, 6-8, 9
  REQUIRE(bytes.size() > 10);
  CHECK(static_cast<unsigned char>(bytes[0]) == 0x1f);
  CHECK(static_cast<unsigned char>(bytes[1]) == 0x8b);
  CHECK(bytes.substr(4, 4) == std::string(4, '\0'));  // mtime
  CHECK(static_cast<unsigned char>(bytes[9]) == 255);  // OS: unknown

  gz::write_csv_gz(tmp / "empty.csv.gz", 0, 3, 6, format);
  CHECK(gz_text(tmp / "empty.csv.gz").empty());
  CHECK(count_members(file_bytes(tmp / "empty.csv.gz")) == 1);
}

TEST_CASE("append_float prints the shortest decimal that reads back bit-exactly", "[datasets]") {
  RandomStream rs(11, 0);
  for (int i = 0; i < 20000; ++i) {
    std::uint32_t bits = rs.next_u32();
    if (((bits >> 23) & 0xFF) == 0xFF) bits &= ~(1u << 30);  // not inf or nan
    float value;
    std::memcpy(&value, &bits, sizeof value);
    std::string text;
    gz::append_float(text, value);
    const float back = std::strtof(text.c_str(), nullptr);
    std::uint32_t back_bits;
    std::memcpy(&back_bits, &back, sizeof back);
    REQUIRE(back_bits == bits);
    REQUIRE(text.size() <= 15);
  }
  std::string text;
  gz::append_float(text, 0.1f);
  CHECK(text == "0.1");
}

TEST_CASE("write_ogb output does not depend on the thread count", "[datasets]") {
  test::ScratchDir tmp;
  SbmOptions o;
  o.nodes = 4000;
  o.avg_degree = 40;
  o.features = 8;
  const Dataset ds = generate_sbm(o);
  OgbWriteOptions w;
  w.add_inverse_edge = true;
  test::with_threads(1, [&] { write_ogb(ds, tmp / "one", w); });
  test::with_threads(3, [&] { write_ogb(ds, tmp / "three", w); });
  const std::set<std::string> files = files_under(tmp / "one");
  REQUIRE(files == files_under(tmp / "three"));
  for (const std::string& f : files) CHECK(file_bytes(tmp / "one/" + f) == file_bytes(tmp / "three/" + f));
  // Its 160000 CSR entries span three chunks of the edge file.
  CHECK(count_members(file_bytes(tmp / "one/raw/edge.csv.gz")) == 3);
}

TEST_CASE("write_ogb refuses an existing directory unless told to overwrite it", "[datasets]") {
  test::ScratchDir tmp;
  const std::string dir = tmp / "out";
  fs::create_directories(dir);
  std::ofstream(dir + "/keep.txt") << "old";
  CHECK_THROWS_AS(write_ogb(tiny_homogeneous(), dir), IoError);
  CHECK(fs::exists(dir + "/keep.txt"));
  OgbWriteOptions o;
  o.overwrite = true;
  write_ogb(tiny_homogeneous(), dir, o);
  CHECK_FALSE(fs::exists(dir + "/keep.txt"));
  CHECK(gz_text(dir + "/raw/num-node-list.csv.gz") == "4\n");
}

TEST_CASE("write_ogb rejects edge weights, unusable names and missing split names", "[datasets]") {
  test::ScratchDir tmp;
  Dataset weighted = tiny_homogeneous();
  weighted.graph = std::move(weighted.graph).with_weights(Array<float>::from_vector({1, 1, 1, 1, 1, 1}));
  CHECK_THROWS_AS(write_ogb(weighted, tmp / "a"), UnsupportedError);

  Dataset bad_name = tiny_heterogeneous();
  bad_name.node_types[1].name = "auth,or";
  CHECK_THROWS_AS(write_ogb(bad_name, tmp / "b"), InvalidArgument);

  Dataset no_split = tiny_homogeneous();
  no_split.meta.split_name.clear();
  CHECK_THROWS_WITH(write_ogb(no_split, tmp / "c"), Catch::Contains("split"));

  OgbWriteOptions inverse;
  inverse.add_inverse_edge = true;
  CHECK_THROWS_AS(write_ogb(tiny_heterogeneous(), tmp / "d", inverse), InvalidArgument);
  CHECK(files_under(tmp.path()).empty());
}
