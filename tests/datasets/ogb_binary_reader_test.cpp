// Tests of read_ogb on OGB's binary (npz) layout: datasets written by OGB's own DatasetSaver
// (tests/data/npz/make_fixtures.py) read to the values of the formulas they were made from,
// homogeneous and heterogeneous, NaN labels as -1; and every kind of bad array a clear error
// naming the archive and the member.
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "datasets/npz.hpp"
#include "datasets/ogb_reader.hpp"
#include "graph/base/error.hpp"
#include "graph/build.hpp"
#include "tests/support/array_compare.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::datasets;
using Catch::Matchers::Contains;

namespace {

namespace fs = std::filesystem;

constexpr std::int64_t n = 40, num_edges = 97, num_features = 3, classes = 4;

std::string fixture(const std::string& name) { return test::test_data_dir() + "/npz/" + name; }

// The formulas of make_fixtures.py.
graph::CsrGraph formula_graph(std::int64_t rows, std::int64_t cols, std::int64_t e, std::int64_t a, std::int64_t b) {
  std::vector<std::int32_t> src, dst;
  for (std::int64_t i = 0; i < e; ++i) {
    src.push_back(static_cast<std::int32_t>((i * a) % n % cols));
    dst.push_back(static_cast<std::int32_t>((i * b + 1) % n % rows));
  }
  return graph::csr_from_coo<std::int32_t>(rows, cols, dst.data(), src.data(), nullptr, e);
}

void check_features(const Array<float>& x, float offset) {
  REQUIRE(x.rows() == n);
  REQUIRE(x.cols() == num_features);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < num_features; ++j) CHECK(x[i * num_features + j] == offset + i / 4.0f - j / 8.0f);
}

void check_labels_and_split(const Array<std::int64_t>& y, const Split& split) {
  REQUIRE(y.size() == n);
  for (std::int64_t i = 0; i < n; ++i) CHECK(y[i] == (i % 5 == 4 ? -1 : i % classes));
  std::vector<std::int64_t> train, valid, test;  // i mod 5 in {0, 1}, {2}, {3}; 4: unlabelled, in none
  for (std::int64_t i = 0; i < n; ++i) {
    if (i % 5 <= 1) train.push_back(i);
    if (i % 5 == 2) valid.push_back(i);
    if (i % 5 == 3) test.push_back(i);
  }
  CHECK(split.train.to_vector() == train);
  CHECK(split.valid.to_vector() == valid);
  CHECK(split.test.to_vector() == test);
}

void check_same_graph(const graph::CsrGraph& a, const graph::CsrGraph& b) {
  REQUIRE(a.num_rows() == b.num_rows());
  REQUIRE(a.num_cols() == b.num_cols());
  CHECK(test::same_array(a.indptr(), b.indptr()));
  CHECK(test::same_array(a.indices<std::int32_t>(), b.indices<std::int32_t>()));
}

Array<std::int64_t> formula_edge_index() {
  Array<std::int64_t> e = Array<std::int64_t>::matrix(2, num_edges);
  for (std::int64_t i = 0; i < num_edges; ++i) {
    e[i] = (i * 7) % n;
    e[num_edges + i] = (i * 3 + 1) % n;
  }
  return e;
}

Array<float> formula_features() {
  Array<float> x = Array<float>::matrix(n, num_features);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < num_features; ++j) x[i * num_features + j] = i / 4.0f - j / 8.0f;
  return x;
}

// The homogeneous fixture copied to `dir`, its raw/data.npz rewritten by `fill` (which gets the
// fixture's arrays to add, change or leave out).
struct DataArrays {
  Array<std::int64_t> num_nodes = Array<std::int64_t>::from_vector({n});
  Array<std::int64_t> num_edges_list = Array<std::int64_t>::from_vector({num_edges});
  Array<std::int64_t> edge_index = formula_edge_index();
  Array<float> node_feat = formula_features();
};
std::string dataset_with(const test::ScratchDir& tmp, const std::function<void(DataArrays&, NpzWriter&)>& fill) {
  const std::string dir = tmp / "ds";
  fs::remove_all(dir);
  fs::copy(fixture("ogb_binary"), dir, fs::copy_options::recursive);
  fs::remove(dir + "/raw/data.npz");
  write_npz(dir + "/raw/data.npz", 1, [&](NpzWriter& npz) {
    DataArrays a;
    fill(a, npz);
  });
  return dir;
}

void add_all(DataArrays& a, NpzWriter& npz) {
  npz.add("num_nodes_list", a.num_nodes);
  npz.add("edge_index", a.edge_index);
  npz.add("num_edges_list", a.num_edges_list);
  npz.add("node_feat", a.node_feat);
}

}  // namespace

TEST_CASE("read_ogb reads a binary dataset written by OGB's DatasetSaver", "[ogb][npz]") {
  const Dataset ds = read_ogb(fixture("ogb_binary"));
  CHECK(ds.meta.name == "ogb_binary");
  CHECK_FALSE(ds.meta.is_hetero);
  CHECK(ds.meta.directed);
  CHECK(ds.meta.num_classes == classes);
  CHECK(ds.meta.task == Task::multiclass);
  CHECK(ds.meta.split_name == "random");
  REQUIRE(ds.node_types.size() == 1);
  check_same_graph(ds.graph, formula_graph(n, n, num_edges, 7, 3));
  check_features(ds.node_types[0].features, 0.0f);
  check_labels_and_split(ds.node_types[0].labels, ds.split);

  OgbReadOptions o;
  o.to_undirected = true;
  const Dataset undirected = read_ogb(fixture("ogb_binary"), o);
  CHECK_FALSE(undirected.meta.directed);
  CHECK(undirected.graph.properties().symmetric);
}

TEST_CASE("read_ogb reads a heterogeneous binary dataset written by OGB's DatasetSaver", "[ogb][npz]") {
  const Dataset ds = read_ogb(fixture("ogb_binary_hetero"));
  CHECK(ds.meta.is_hetero);
  CHECK(ds.meta.target_type == "paper");
  CHECK(ds.meta.num_classes == classes);
  REQUIRE(ds.node_types.size() == 2);
  CHECK(ds.node_type("author").count == 30);
  CHECK(ds.node_type("author").features.empty());
  CHECK(ds.node_type("author").labels.empty());
  check_features(ds.node_type("paper").features, 1.0f);
  check_labels_and_split(ds.node_type("paper").labels, ds.split);
  REQUIRE(ds.hetero.num_relations() == 2);
  const int writes = ds.hetero.find_relation({"author", "writes", "paper"});
  const int cites = ds.hetero.find_relation({"paper", "cites", "paper"});
  REQUIRE(writes >= 0);
  REQUIRE(cites >= 0);
  check_same_graph(ds.hetero.relation(writes), formula_graph(n, 30, 50, 5, 3));
  check_same_graph(ds.hetero.relation(cites), formula_graph(n, n, num_edges, 7, 3));
}

TEST_CASE("read_ogb names the archive and member and value of every bad binary array", "[ogb][npz]") {
  test::ScratchDir tmp;
  const auto error_of = [&](const std::function<void(DataArrays&, NpzWriter&)>& fill) {
    const std::string dir = dataset_with(tmp, fill);
    try {
      read_ogb(dir);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of(add_all).empty());  // the rewritten dataset itself is fine
  CHECK_THAT(error_of([](DataArrays& a, NpzWriter& npz) {
               a.edge_index[num_edges + 5] = n;
               add_all(a, npz);
             }),
             Contains("data.npz: edge_index.npy") && Contains("edge 5") &&
                 Contains("destination vertex 40 is out of range [0, 40)"));
  CHECK_THAT(error_of([](DataArrays& a, NpzWriter& npz) {
               a.edge_index[3] = -1;
               add_all(a, npz);
             }),
             Contains("edge 3") && Contains("source vertex -1"));
  CHECK_THAT(error_of([](DataArrays& a, NpzWriter& npz) {
               a.edge_index = Array<std::int64_t>::matrix(3, num_edges);
               add_all(a, npz);
             }),
             Contains("edge_index.npy") && Contains("expected (2, 97)"));
  CHECK_THAT(error_of([](DataArrays& a, NpzWriter& npz) {
               a.num_edges_list[0] = 96;
               add_all(a, npz);
             }),
             Contains("has shape (2, 97), expected (2, 96)"));
  CHECK_THAT(error_of([](DataArrays& a, NpzWriter& npz) {
               npz.add("num_nodes_list", a.num_nodes);
               npz.add("edge_index", Array<float>::matrix(2, num_edges));
               npz.add("num_edges_list", a.num_edges_list);
               npz.add("node_feat", a.node_feat);
             }),
             Contains("edge_index.npy") && Contains("expected integers"));
  CHECK_THAT(error_of([](DataArrays& a, NpzWriter& npz) {
               a.node_feat[7] = std::numeric_limits<float>::quiet_NaN();
               add_all(a, npz);
             }),
             Contains("node_feat.npy") && Contains("row 2, column 1") && Contains("not finite"));
  CHECK_THAT(error_of([](DataArrays& a, NpzWriter& npz) {
               a.num_nodes = Array<std::int64_t>::from_vector({n, n});
               add_all(a, npz);
             }),
             Contains("lists 2 graphs"));
  CHECK_THAT(error_of([](DataArrays& a, NpzWriter& npz) {
               add_all(a, npz);
               npz.add("year", a.num_nodes);
             }),
             Contains("data.npz") && Contains("holds array 'year'"));
  CHECK_THAT(error_of([](DataArrays& a, NpzWriter& npz) {
               npz.add("num_nodes_list", a.num_nodes);
               npz.add("num_edges_list", a.num_edges_list);
               npz.add("node_feat", a.node_feat);
             }),
             Contains("data.npz") && Contains("has no array 'edge_index'"));
}

TEST_CASE("read_ogb refuses bad binary labels and a damaged archive", "[ogb][npz]") {
  test::ScratchDir tmp;
  const std::string dir = dataset_with(tmp, add_all);
  const std::string labels = dir + "/raw/node-label.npz";
  const auto labels_error = [&](const Array<double>& y) {
    fs::remove(labels);
    write_npz(labels, 6, [&](NpzWriter& npz) { npz.add("node_label", y); });
    try {
      read_ogb(dir);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Array<double> y = Array<double>::matrix(n, 1);
  for (std::int64_t i = 0; i < n; ++i)
    y[i] = i % 5 == 4 ? std::numeric_limits<double>::quiet_NaN() : double(i % classes);
  CHECK(labels_error(y).empty());
  y[6] = 2.5;
  CHECK_THAT(labels_error(y),
             Contains("node_label.npy") && Contains("row 6") && Contains("label 2.5 is not an integer"));
  y[6] = 4;
  CHECK_THAT(labels_error(y), Contains("row 6") && Contains("label 4 is not below 4"));
  y[6] = 2;
  y[7] = std::numeric_limits<double>::quiet_NaN();  // vertex 7 is in the validation split
  CHECK_THAT(labels_error(y), Contains("vertex 7 has no label") && Contains("valid"));
  CHECK_THAT(labels_error(Array<double>::matrix(n - 1, 1)),
             Contains("node_label.npy") && Contains("has shape (39, 1)"));

  fs::resize_file(dir + "/raw/data.npz", fs::file_size(dir + "/raw/data.npz") - 10);
  CHECK_THROWS_WITH(read_ogb(dir), Contains("raw/data.npz") && Contains("end-of-central-directory"));
  fs::remove(dir + "/raw/data.npz");
  fs::remove(labels);
  CHECK_THROWS_WITH(read_ogb(dir), Contains("raw/data.npz") && Contains("cannot open"));

  OgbReadOptions inverse;
  inverse.add_inverse_edge = true;
  CHECK_THROWS_AS(read_ogb(fixture("ogb_binary"), inverse), InvalidArgument);
}

TEST_CASE("read_ogb makes node features from a binary dataset's edge_feat", "[ogb][npz]") {
  test::ScratchDir tmp;
  // Edge e gets (e, 1): the sums are the ids and the number of the edges into each vertex.
  Array<float> edge_feat = Array<float>::matrix(num_edges, 2);
  for (std::int64_t e = 0; e < num_edges; ++e) {
    edge_feat[2 * e] = static_cast<float>(e);
    edge_feat[2 * e + 1] = 1.0f;
  }
  const std::string dir = dataset_with(tmp, [&](DataArrays& a, NpzWriter& npz) {
    npz.add("num_nodes_list", a.num_nodes);
    npz.add("edge_index", a.edge_index);
    npz.add("num_edges_list", a.num_edges_list);
    npz.add("edge_feat", edge_feat);
  });
  OgbReadOptions o;
  o.node_features_from_edges = EdgeFeatureReduce::sum;
  const Dataset ds = read_ogb(dir, o);
  std::vector<float> expected(2 * n, 0.0f);
  for (std::int64_t e = 0; e < num_edges; ++e) {
    const std::int64_t dst = (e * 3 + 1) % n;
    expected[static_cast<std::size_t>(2 * dst)] += static_cast<float>(e);
    expected[static_cast<std::size_t>(2 * dst + 1)] += 1.0f;
  }
  CHECK(ds.node_types[0].features.to_vector() == expected);
  o.node_features_from_edges = EdgeFeatureReduce::mean;
  const Array<float> mean = std::move(read_ogb(dir, o).node_types[0].features);
  for (std::int64_t v = 0; v < n; ++v) CHECK(mean[2 * v + 1] == (expected[static_cast<std::size_t>(2 * v + 1)] > 0 ? 1.0f : 0.0f));

  CHECK_THROWS_WITH(read_ogb(fixture("ogb_binary"), o), Contains("has node features") && Contains("node_feat.npy"));
  const std::string without = dataset_with(tmp, [&](DataArrays& a, NpzWriter& npz) {
    npz.add("num_nodes_list", a.num_nodes);
    npz.add("edge_index", a.edge_index);
    npz.add("num_edges_list", a.num_edges_list);
  });
  CHECK_THROWS_WITH(read_ogb(without, o), Contains("has no array 'edge_feat'"));
}
