// Tests of datasets/dataset.*: the accessors and check_dataset's verdict on every kind of
// inconsistency (sizes, labels, split ids, non-finite features, vertex types).
#include "datasets/dataset.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "graph/base/error.hpp"
#include "tests/datasets/tiny_datasets.hpp"

using namespace halo;
using namespace halo::datasets;

TEST_CASE("check_dataset accepts the tiny homogeneous and heterogeneous datasets", "[dataset]") {
  CHECK_NOTHROW(check_dataset(test::tiny_homogeneous()));
  CHECK_NOTHROW(check_dataset(test::tiny_homogeneous(true, false, false, false)));
  CHECK_NOTHROW(check_dataset(test::tiny_hetero()));
}

TEST_CASE("Dataset accessors find the target type and count vertices and edges", "[dataset]") {
  const Dataset homo = test::tiny_homogeneous();
  CHECK(homo.target().name == "node");
  CHECK(homo.num_vertices() == 4);
  CHECK(homo.num_edges() == 4);
  const Dataset hetero = test::tiny_hetero();
  CHECK(hetero.target().count == 3);
  CHECK(hetero.node_type("author").count == 2);
  CHECK(hetero.num_vertices() == 5);
  CHECK(hetero.num_edges() == 6);
  CHECK_THROWS_WITH(hetero.node_type("venue"), Catch::Contains("has no vertex type 'venue'"));
}

TEST_CASE("Task names round-trip and unknown names are refused", "[dataset]") {
  CHECK(task_from_string(to_string(Task::multiclass)) == Task::multiclass);
  CHECK(task_from_string(to_string(Task::multilabel)) == Task::multilabel);
  CHECK_THROWS_AS(task_from_string("regression"), InvalidArgument);
}

TEST_CASE("check_dataset refuses features with the wrong number of rows", "[dataset]") {
  Dataset ds = test::tiny_homogeneous();
  ds.node_types[0].features = Array<float>::matrix(3, 3);
  for (float& x : ds.node_types[0].features) x = 1.0f;
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("features of 'node' have 3 rows, expected 4"));
}

TEST_CASE("check_dataset names the vertex and column of a non-finite feature", "[dataset]") {
  Dataset ds = test::tiny_homogeneous();
  ds.node_types[0].features[2 * 3 + 1] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("vertex 2 column 1 is not finite"));
  ds.node_types[0].features[2 * 3 + 1] = 0.0f;
  ds.node_types[0].features[3 * 3 + 2] = -std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("vertex 3 column 2 is not finite"));
}

TEST_CASE("check_dataset refuses labels outside -1..num_classes-1", "[dataset]") {
  Dataset ds = test::tiny_homogeneous();
  ds.node_types[0].labels[1] = 3;
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("vertex 1 is 3, expected -1 (none) or 0..2"));
  ds.node_types[0].labels[1] = -2;
  CHECK_THROWS_AS(check_dataset(ds), InvalidArgument);
  ds.node_types[0].labels = Array<std::int64_t>::from_vector({0, 1, 2});
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("are 3 x 1, expected 4 x 1"));
}

TEST_CASE("check_dataset checks multilabel labels as 0/1 columns, one per task", "[dataset]") {
  Dataset ds = test::tiny_multilabel();
  CHECK_NOTHROW(check_dataset(ds));
  ds.node_types[0].labels[5] = 2;
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("vertex 2 is 2"));
  ds.meta.num_tasks = 3;
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("expected 4 x 3"));
}

TEST_CASE("check_dataset refuses split ids out of range or listed twice", "[dataset]") {
  Dataset ds = test::tiny_homogeneous();
  ds.split.test = Array<std::int64_t>::from_vector({4});
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("test split entry 0 is vertex 4, outside 0..3"));
  ds.split.test = Array<std::int64_t>::from_vector({-1});
  CHECK_THROWS_AS(check_dataset(ds), InvalidArgument);
  ds.split.test = Array<std::int64_t>::from_vector({3, 3});
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("vertex 3 is listed twice (again in test split, entry 1)"));
  ds.split.test = Array<std::int64_t>::from_vector({2});  // 2 is a training vertex
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("vertex 2 is listed twice (again in test split, entry 0)"));
}

TEST_CASE("check_dataset refuses a graph whose size differs from the vertex count", "[dataset]") {
  Dataset ds = test::tiny_homogeneous();
  ds.node_types[0].count = 5;
  ds.node_types[0].features = {};
  ds.node_types[0].labels = {};
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("graph is 4 x 4, expected 5 vertices"));
}

TEST_CASE("check_dataset refuses inconsistent vertex types", "[dataset]") {
  Dataset none = test::tiny_homogeneous();
  none.node_types.clear();
  CHECK_THROWS_WITH(check_dataset(none), Catch::Contains("has no vertex types"));

  Dataset two = test::tiny_homogeneous();
  NodeType extra;
  extra.name = "other";
  two.node_types.push_back(std::move(extra));
  CHECK_THROWS_WITH(check_dataset(two), Catch::Contains("must have one vertex type"));

  Dataset hetero = test::tiny_hetero();
  hetero.node_types[1].count = 7;
  CHECK_THROWS_WITH(check_dataset(hetero), Catch::Contains("vertex type 'author' counts disagree"));
  hetero.node_types.pop_back();
  CHECK_THROWS_WITH(check_dataset(hetero), Catch::Contains("graph has 2 vertex types, data has 1"));
}

TEST_CASE("check_dataset checks the features and labels of every heterogeneous type", "[dataset]") {
  Dataset ds = test::tiny_hetero();
  ds.node_types[1].features = Array<float>::matrix(2, 4);
  for (float& x : ds.node_types[1].features) x = 0.5f;
  CHECK_NOTHROW(check_dataset(ds));
  ds.node_types[1].features[7] = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("feature of 'author' vertex 1 column 3"));
  ds.node_types[1].features = {};
  ds.split.valid = Array<std::int64_t>::from_vector({3});  // papers are 0..2
  CHECK_THROWS_WITH(check_dataset(ds), Catch::Contains("outside 0..2"));
}
