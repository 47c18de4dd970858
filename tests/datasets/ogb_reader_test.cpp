// Tests of datasets/ogb_reader.* on homogeneous data: OGB's edge semantics, features, labels,
// splits, metadata inference, plain CSV, and one test per malformed fixture.
#include "datasets/ogb_reader.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "datasets/detail/gzip_reader.hpp"
#include "graph/base/error.hpp"
#include "tests/datasets/ogb_fixture.hpp"
#include "tests/support/csr_rows.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::datasets;
using namespace halo::test;
using Catch::Contains;

namespace {

// tests/data/ogb/tiny stores these rows (src, dst):
//   0 --- 1
//   |   //      1-2 twice (as 1,2 and 2,1), a self loop on 3, vertex 4 isolated
//   2 --- 3 (loop)     4
const std::vector<std::pair<int, int>> tiny_edges = {{0, 1}, {0, 2}, {1, 2}, {2, 3}, {3, 3}, {2, 1}};

// The naive reference: rows = destinations; `inverse` adds (d, s) after every (s, d) as OGB
// does; `dedup` keeps one copy of each pair.
CsrRows reference_rows(int n, bool inverse, bool dedup) {
  CsrRows rows(static_cast<std::size_t>(n));
  for (auto [s, d] : tiny_edges) {
    rows[static_cast<std::size_t>(d)].push_back(s);
    if (inverse) rows[static_cast<std::size_t>(s)].push_back(d);
  }
  for (auto& row : rows) {
    std::sort(row.begin(), row.end());
    if (dedup) row.erase(std::unique(row.begin(), row.end()), row.end());
  }
  return rows;
}

std::vector<std::int64_t> values(const Array<std::int64_t>& a) { return a.to_vector(); }

}  // namespace

TEST_CASE("read_ogb adds inverse edges as OGB does, keeping duplicates and self loops twice", "[datasets]") {
  const Dataset ds = read_ogb(ogb_fixture("tiny"));
  CHECK(ds.graph.num_rows() == 5);
  CHECK(ds.graph.num_edges() == 12);
  CHECK(rows_of(ds.graph) == reference_rows(5, true, false));
  CHECK(rows_of(ds.graph)[3] == std::vector<std::int64_t>{2, 3, 3});
  CHECK_FALSE(ds.meta.directed);
}

TEST_CASE("read_ogb with to_undirected symmetrises and drops duplicate edges", "[datasets]") {
  OgbReadOptions options;
  options.to_undirected = true;
  const Dataset ds = read_ogb(ogb_fixture("tiny"), options);
  CHECK(ds.graph.num_edges() == 9);
  CHECK(rows_of(ds.graph) == reference_rows(5, true, true));
  CHECK_FALSE(ds.meta.directed);
}

TEST_CASE("read_ogb with add_inverse_edge off keeps the stored edges directed", "[datasets]") {
  OgbReadOptions options;
  options.add_inverse_edge = false;
  const Dataset ds = read_ogb(ogb_fixture("tiny"), options);
  CHECK(ds.graph.num_edges() == 6);
  CHECK(rows_of(ds.graph) == reference_rows(5, false, false));
  CHECK(ds.meta.directed);
}

TEST_CASE("read_ogb reads features as float32, NaN labels as -1, and the metadata's split", "[datasets]") {
  const Dataset ds = read_ogb(ogb_fixture("tiny"));
  REQUIRE(ds.node_types.size() == 1);
  const NodeType& node = ds.node_types[0];
  CHECK(node.name == "node");
  CHECK(node.count == 5);
  REQUIRE(node.features.rows() == 5);
  REQUIRE(node.features.cols() == 3);
  const std::vector<float> expected = {1, 0, 2, 0, 0, 0, 3, 1, 0, 0, 5, 1, 2, 2, 2};
  CHECK(node.features.to_vector() == expected);
  CHECK(node.labels.ndim() == 1);
  CHECK(values(node.labels) == std::vector<std::int64_t>{0, 1, 2, 1, -1});
  CHECK(values(ds.split.train) == std::vector<std::int64_t>{0, 1});
  CHECK(values(ds.split.valid) == std::vector<std::int64_t>{2});
  CHECK(values(ds.split.test) == std::vector<std::int64_t>{3});
  CHECK(ds.meta.name == "tiny");
  CHECK(ds.meta.task == Task::multiclass);
  CHECK(ds.meta.num_classes == 3);
  CHECK(ds.meta.num_tasks == 1);
  CHECK(ds.meta.split_name == "fixed");
  CHECK_FALSE(ds.meta.is_hetero);
  CHECK(ds.meta.target_type == "node");
  CHECK(ds.meta.source == ogb_fixture("tiny"));
}

TEST_CASE("read_ogb reads the split folder and class count the options name", "[datasets]") {
  OgbReadOptions options;
  options.split = "other";
  options.num_classes = 4;
  const Dataset ds = read_ogb(ogb_fixture("tiny"), options);
  CHECK(ds.meta.split_name == "other");
  CHECK(values(ds.split.train) == std::vector<std::int64_t>{3});
  CHECK(values(ds.split.test) == std::vector<std::int64_t>{1, 2});
  CHECK(ds.meta.num_classes == 4);
}

TEST_CASE("read_ogb reads plain .csv files where the .gz files are absent", "[datasets]") {
  namespace fs = std::filesystem;
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny");
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string path = entry.path().string();
    if (entry.path().extension() != ".gz") continue;
    halo::test::write_file(path.substr(0, path.size() - 3), datasets::detail::read_text_file(path));
    fs::remove(path);
  }
  const Dataset plain = read_ogb(dir);
  const Dataset gz = read_ogb(ogb_fixture("tiny"));
  CHECK(rows_of(plain.graph) == rows_of(gz.graph));
  CHECK(plain.node_types[0].features.to_vector() == gz.node_types[0].features.to_vector());
  CHECK(values(plain.node_types[0].labels) == values(gz.node_types[0].labels));
  CHECK(values(plain.split.valid) == values(gz.split.valid));
}

TEST_CASE("read_ogb takes metadata from master.csv in the parent folder, matching ogbn_x to ogbn-x", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny", "", "my_tiny");
  std::filesystem::remove(dir + "/meta.json");
  halo::test::write_file(scratch / "master.csv",
                         ",other,my-tiny\nnum classes,9,5\nadd_inverse_edge,False,True\nsplit,x,other\n"
                         "task type,multiclass classification,multiclass classification\n");
  const Dataset ds = read_ogb(dir);
  CHECK(ds.meta.name == "my-tiny");
  CHECK(ds.meta.num_classes == 5);
  CHECK(ds.meta.split_name == "other");
  CHECK(ds.graph.num_edges() == 12);
}

TEST_CASE("read_ogb infers the class count and the only split folder when no metadata gives them", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny");
  std::filesystem::remove(dir + "/meta.json");
  std::filesystem::remove_all(dir + "/split/other");
  OgbReadOptions options;
  options.add_inverse_edge = true;
  const Dataset ds = read_ogb(dir, options);
  CHECK(ds.meta.name == "dataset");
  CHECK(ds.meta.num_classes == 3);  // max label 2 + 1
  CHECK(ds.meta.split_name == "fixed");
  CHECK(ds.meta.task == Task::multiclass);
}

TEST_CASE("read_ogb names the option to set when the metadata lacks add_inverse_edge or the split", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny");
  std::filesystem::remove(dir + "/meta.json");
  OgbReadOptions options;
  options.split = "fixed";
  CHECK_THROWS_WITH(read_ogb(dir, options), Contains("OgbReadOptions::add_inverse_edge"));
  options = {};
  options.add_inverse_edge = true;
  CHECK_THROWS_WITH(read_ogb(dir, options), Contains("OgbReadOptions::split") && Contains("fixed, other"));
}

TEST_CASE("read_ogb reads multilabel (proteins-style) labels with NaN as -1", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny");
  std::filesystem::remove(dir + "/raw/node-label.csv.gz");
  halo::test::write_file(dir + "/raw/node-label.csv", "0,1\n1,nan\n1,1\n0,0\n,0\n");
  halo::test::write_file(dir + "/meta.json",
                         R"({"num tasks": "2", "task type": "binary classification", "add_inverse_edge": "True",
                             "split": "fixed"})");
  const Dataset ds = read_ogb(dir);
  CHECK(ds.meta.task == Task::multilabel);
  CHECK(ds.meta.num_tasks == 2);
  CHECK(ds.meta.num_classes == 2);
  const Array<std::int64_t>& y = ds.node_types[0].labels;
  CHECK(y.rows() == 5);
  CHECK(y.cols() == 2);
  CHECK(values(y) == std::vector<std::int64_t>{0, 1, 1, -1, 1, 1, 0, 0, -1, 0});

  halo::test::write_file(dir + "/raw/node-label.csv", "0,1\n1,2\n1,1\n0,0\n1,0\n");
  const IoError e = ogb_io_error(dir);
  CHECK(e.file() == dir + "/raw/node-label.csv");
  CHECK(e.line() == 2);
  CHECK_THAT(e.what(), Contains("label 2"));
}

TEST_CASE("read_ogb follows metadata that says binary to the npz archive", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny");
  halo::test::write_file(dir + "/meta.json", R"({"binary": "True", "add_inverse_edge": "False", "split": "fixed"})");
  CHECK_THROWS_AS(read_ogb(dir), IoError);
  CHECK_THROWS_WITH(read_ogb(dir), Contains("raw/data.npz") && Contains("cannot open"));
}

// One test per malformed fixture (tests/data/ogb/malformed/, see its README): each error names
// the file and the 1-based line or the value.

TEST_CASE("read_ogb reports a missing file by name", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "missing_file");
  CHECK(e.file() == copied_file(scratch, "raw/node-label.csv.gz"));
  CHECK_THAT(e.what(), Contains("no such file"));
}

TEST_CASE("read_ogb reports a truncated gzip file with the line the data stops in", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "truncated_gz");
  CHECK(e.file() == copied_file(scratch, "raw/edge.csv.gz"));
  CHECK(e.line() == 5);
  CHECK_THAT(e.what(), Contains("truncated"));
}

TEST_CASE("read_ogb reports a .gz file that is not gzip data", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "corrupt_gz");
  CHECK(e.file() == copied_file(scratch, "raw/edge.csv.gz"));
  CHECK(e.line() == 1);
  CHECK_THAT(e.what(), Contains("gzip"));
}

TEST_CASE("read_ogb reports a non-numeric field with its line and text", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "non_numeric");
  CHECK(e.file() == copied_file(scratch, "raw/edge.csv.gz"));
  CHECK(e.line() == 3);
  CHECK_THAT(e.what(), Contains("edge.csv.gz:3:") && Contains("field 2 is 'two'"));
}

TEST_CASE("read_ogb reports a row with the wrong number of fields", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "wrong_columns");
  CHECK(e.file() == copied_file(scratch, "raw/node-feat.csv.gz"));
  CHECK(e.line() == 4);
  CHECK_THAT(e.what(), Contains("has 2 fields, expected 3"));
}

TEST_CASE("read_ogb reports an edge to a vertex past the vertex count", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "vertex_out_of_range");
  CHECK(e.file() == copied_file(scratch, "raw/edge.csv.gz"));
  CHECK(e.line() == 5);
  CHECK_THAT(e.what(), Contains("destination vertex 5") && Contains("0..4") && Contains("num-node-list.csv.gz"));
}

TEST_CASE("read_ogb reports the edge file's fault when the feature file, read beside it, has one too", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny", "nan_feature");
  std::filesystem::copy_file(ogb_fixture("malformed/non_numeric/raw/edge.csv.gz"), dir + "/raw/edge.csv.gz",
                             std::filesystem::copy_options::overwrite_existing);
  for (int i = 0; i < 20; ++i) {  // whichever thread fails first
    const IoError e = ogb_io_error(dir);
    CHECK(e.file() == copied_file(scratch, "raw/edge.csv.gz"));
    CHECK(e.line() == 3);
  }
}

TEST_CASE("read_ogb reports faults in file order although the labels and the split are read beside", "[datasets]") {
  ScratchDir scratch;
  // A label past num_classes and a split id out of range: the labels come first.
  const std::string dir = copy_fixture(scratch, "tiny", "label_out_of_range");
  std::filesystem::copy_file(ogb_fixture("malformed/split_out_of_range/split/fixed/test.csv.gz"),
                             dir + "/split/fixed/test.csv.gz", std::filesystem::copy_options::overwrite_existing);
  for (int i = 0; i < 10; ++i) {  // whichever thread fails first
    const IoError e = ogb_io_error(dir);
    CHECK(e.file() == copied_file(scratch, "raw/node-label.csv.gz"));
    CHECK(e.line() == 3);
  }
  // A non-numeric edge field as well: the edges come before both.
  std::filesystem::copy_file(ogb_fixture("malformed/non_numeric/raw/edge.csv.gz"), dir + "/raw/edge.csv.gz",
                             std::filesystem::copy_options::overwrite_existing);
  for (int i = 0; i < 10; ++i) {
    const IoError e = ogb_io_error(dir);
    CHECK(e.file() == copied_file(scratch, "raw/edge.csv.gz"));
    CHECK(e.line() == 3);
  }
}

TEST_CASE("read_ogb reports a negative vertex id", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "negative_id");
  CHECK(e.file() == copied_file(scratch, "raw/edge.csv.gz"));
  CHECK(e.line() == 2);
  CHECK_THAT(e.what(), Contains("source vertex -1"));
}

TEST_CASE("read_ogb reports an edge file shorter than num-edge-list says", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "edge_rows_fewer");
  CHECK(e.file() == copied_file(scratch, "raw/edge.csv.gz"));
  CHECK(e.line() == 7);
  CHECK_THAT(e.what(), Contains("ends after 6 rows") && Contains("num-edge-list.csv.gz gives 7"));
}

TEST_CASE("read_ogb reports an edge file longer than num-edge-list says", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "edge_rows_more");
  CHECK(e.file() == copied_file(scratch, "raw/edge.csv.gz"));
  CHECK(e.line() == 6);
  CHECK_THAT(e.what(), Contains("more rows than the 5") && Contains("num-edge-list.csv.gz"));
}

TEST_CASE("read_ogb reports a feature file whose rows disagree with num-node-list", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "feature_rows");
  CHECK(e.file() == copied_file(scratch, "raw/node-feat.csv.gz"));
  CHECK(e.line() == 5);
  CHECK_THAT(e.what(), Contains("ends after 4 rows") && Contains("num-node-list.csv.gz gives 5"));
}

TEST_CASE("read_ogb reports a label file whose rows disagree with num-node-list", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "label_rows");
  CHECK(e.file() == copied_file(scratch, "raw/node-label.csv.gz"));
  CHECK(e.line() == 6);
  CHECK_THAT(e.what(), Contains("more rows than the 5"));
}

TEST_CASE("read_ogb reports a label at or past num_classes", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "label_out_of_range");
  CHECK(e.file() == copied_file(scratch, "raw/node-label.csv.gz"));
  CHECK(e.line() == 3);
  CHECK_THAT(e.what(), Contains("label 3") && Contains("num classes is 3"));
}

TEST_CASE("read_ogb reports a split id out of range", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "split_out_of_range");
  CHECK(e.file() == copied_file(scratch, "split/fixed/test.csv.gz"));
  CHECK(e.line() == 2);
  CHECK_THAT(e.what(), Contains("vertex 5"));
}

TEST_CASE("read_ogb reports a vertex listed in two splits", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "split_duplicate");
  CHECK(e.file() == copied_file(scratch, "split/fixed/valid.csv.gz"));
  CHECK(e.line() == 2);
  CHECK_THAT(e.what(), Contains("vertex 0 is listed twice") && Contains("line 1 of train.csv.gz"));
}

TEST_CASE("read_ogb reports a vertex listed twice in one split", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "split_duplicate_within");
  CHECK(e.file() == copied_file(scratch, "split/fixed/train.csv.gz"));
  CHECK(e.line() == 3);
  CHECK_THAT(e.what(), Contains("line 1 of train.csv.gz"));
}

TEST_CASE("read_ogb reports a NaN feature", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "nan_feature");
  CHECK(e.file() == copied_file(scratch, "raw/node-feat.csv.gz"));
  CHECK(e.line() == 2);
  CHECK_THAT(e.what(), Contains("'nan'") && Contains("finite"));
}

TEST_CASE("read_ogb reports an infinite feature", "[datasets]") {
  ScratchDir scratch;
  const IoError e = malformed(scratch, "inf_feature");
  CHECK(e.file() == copied_file(scratch, "raw/node-feat.csv.gz"));
  CHECK(e.line() == 3);
  CHECK_THAT(e.what(), Contains("'inf'"));
}

TEST_CASE("read_ogb explains that a torch-pickled split_dict.pt cannot be read", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny", "split_dict_pt");
  CHECK_THROWS_AS(read_ogb(dir), UnsupportedError);
  CHECK_THROWS_WITH(read_ogb(dir), Contains("split_dict.pt") && Contains("torch"));
}

TEST_CASE("read_ogb refuses a feature file the metadata promises but the folder lacks", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny");
  std::filesystem::remove(dir + "/raw/node-feat.csv.gz");
  const IoError e = ogb_io_error(dir);
  CHECK(e.file() == dir + "/raw/node-feat.csv.gz");
  CHECK_THAT(e.what(), Contains("is missing") && Contains("has_node_attr True"));
}

TEST_CASE("read_ogb refuses an empty label on a vertex of the split, naming its line and split", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny");
  std::filesystem::remove(dir + "/raw/node-label.csv.gz");
  write_file(dir + "/raw/node-label.csv", "0\n\n2\n1\nnan\n");  // vertex 1 is in train
  const IoError e = ogb_io_error(dir);
  CHECK(e.file() == dir + "/raw/node-label.csv");
  CHECK(e.line() == 2);
  CHECK_THAT(e.what(), Contains("vertex 1 has no label") && Contains("split/fixed puts it in train"));
}

TEST_CASE("read_ogb refuses a class count larger than the labelled vertices could have", "[datasets]") {
  OgbReadOptions options;
  options.num_classes = 1000000000000;
  CHECK_THROWS_AS(read_ogb(ogb_fixture("tiny"), options), InvalidArgument);
  CHECK_THROWS_WITH(read_ogb(ogb_fixture("tiny"), options),
                    Contains("num_classes is 1000000000000") && Contains("more classes than the 5 labelled vertices"));
}

TEST_CASE("read_ogb makes node features from edge features as the proteins baselines do", "[datasets]") {
  ScratchDir scratch;
  const std::string dir = copy_fixture(scratch, "tiny");
  std::filesystem::remove(dir + "/raw/node-feat.csv.gz");
  // Edge e gets (e + 0.5, -e); tiny's six stored edges (0,1) (0,2) (1,2) (2,3) (3,3) (2,1) each
  // count for both ends (add_inverse_edge), the self loop twice for vertex 3; vertex 4 has none.
  halo::test::write_file(dir + "/raw/edge-feat.csv", "0.5,0\n1.5,-1\n2.5,-2\n3.5,-3\n4.5,-4\n5.5,-5\n");
  OgbReadOptions o;
  o.node_features_from_edges = EdgeFeatureReduce::mean;
  const Dataset mean = read_ogb(dir, o);
  const std::vector<float> expected_mean{1.0f, -0.5f, 8.5f / 3, -7.0f / 3, 3.25f, -2.75f, 12.5f / 3, -11.0f / 3,
                                         0.0f, 0.0f};
  const Array<float>& x = mean.node_types[0].features;
  REQUIRE(x.rows() == 5);
  REQUIRE(x.cols() == 2);
  for (std::size_t i = 0; i < expected_mean.size(); ++i) CHECK(x[static_cast<std::int64_t>(i)] == Approx(expected_mean[i]));
  o.node_features_from_edges = EdgeFeatureReduce::sum;
  const Array<float> sum = std::move(read_ogb(dir, o).node_types[0].features);
  CHECK(sum.to_vector() == std::vector<float>{2.0f, -1.0f, 8.5f, -7.0f, 13.0f, -11.0f, 12.5f, -11.0f, 0.0f, 0.0f});

  std::filesystem::remove(dir + "/raw/edge-feat.csv");
  CHECK_THROWS_WITH(read_ogb(dir, o), Contains("edge-feat.csv.gz") && Contains("no such file"));
  CHECK_THROWS_WITH(read_ogb(ogb_fixture("tiny"), o), Contains("has node features") && Contains("node-feat.csv.gz"));
  CHECK_THROWS_AS(read_ogb(ogb_fixture("tiny_hetero"), o), InvalidArgument);
}
