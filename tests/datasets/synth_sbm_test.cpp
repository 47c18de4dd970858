// Tests of datasets/synth_sbm.cpp and the shared pieces in datasets/detail/synth_common.*:
// determinism, the graph against the raw pairs it was built from, homophily, degree skew,
// learnability of the labels, the split, and option checks.
#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/detail/synth_common.hpp"
#include "datasets/synth.hpp"
#include "graph/base/error.hpp"
#include "tests/datasets/nearest_class_mean.hpp"
#include "tests/support/array_compare.hpp"
#include "tests/support/thread_count.hpp"

using namespace halo;
using namespace halo::datasets;
namespace synth = halo::datasets::detail;
using halo::test::nearest_class_mean_accuracy;
using halo::test::same_array;

namespace {

bool same_dataset(const Dataset& a, const Dataset& b) {
  const NodeType& x = a.node_types.at(0);
  const NodeType& y = b.node_types.at(0);
  return same_array(a.graph.indptr(), b.graph.indptr()) &&
         same_array(a.graph.indices<std::int32_t>(), b.graph.indices<std::int32_t>()) &&
         same_array(x.features, y.features) && same_array(x.labels, y.labels) &&
         same_array(a.split.train, b.split.train) && same_array(a.split.valid, b.split.valid) &&
         same_array(a.split.test, b.split.test);
}

// Share of stored (directed) edges whose endpoints have the same label.
double edge_homophily(const Dataset& ds) {
  const auto g = ds.graph.view<std::int32_t>();
  const Array<std::int64_t>& y = ds.target().labels;
  std::int64_t same = 0;
  for (std::int64_t r = 0; r < g.num_rows; ++r)
    for (std::int64_t k = g.indptr[r]; k < g.indptr[r + 1]; ++k) same += y[g.indices[k]] == y[r];
  return static_cast<double>(same) / static_cast<double>(g.num_edges);
}

// Accuracy of predicting each vertex's class as the most common class among its neighbours.
double neighbour_majority_accuracy(const Dataset& ds) {
  const auto g = ds.graph.view<std::int32_t>();
  const Array<std::int64_t>& y = ds.target().labels;
  std::int64_t right = 0, with_neighbours = 0;
  std::vector<std::int64_t> votes(static_cast<std::size_t>(ds.meta.num_classes));
  for (std::int64_t r = 0; r < g.num_rows; ++r) {
    if (g.degree(r) == 0) continue;
    std::fill(votes.begin(), votes.end(), 0);
    for (std::int64_t k = g.indptr[r]; k < g.indptr[r + 1]; ++k) ++votes[static_cast<std::size_t>(y[g.indices[k]])];
    right += std::max_element(votes.begin(), votes.end()) - votes.begin() == y[r];
    ++with_neighbours;
  }
  return static_cast<double>(right) / static_cast<double>(with_neighbours);
}

SbmOptions small_sbm() {
  SbmOptions o;
  o.nodes = 3000;
  o.avg_degree = 8;
  o.features = 16;
  o.classes = 5;
  o.seed = 7;
  return o;
}

}  // namespace

TEST_CASE("RandomPermutation is a bijection of 0..n-1 that depends on the seed", "[datasets]") {
  for (const std::int64_t n : {1, 2, 3, 5, 16, 17, 1000, 4097}) {
    const synth::RandomPermutation p(n, 3, synth::SynthPurpose::split);
    std::vector<char> hit(static_cast<std::size_t>(n), 0);
    for (std::int64_t x = 0; x < n; ++x) {
      const std::int64_t y = p(x);
      REQUIRE(y >= 0);
      REQUIRE(y < n);
      hit[static_cast<std::size_t>(y)] = 1;
    }
    CHECK(std::count(hit.begin(), hit.end(), 1) == n);
  }
  const synth::RandomPermutation a(1000, 1, synth::SynthPurpose::split), b(1000, 2, synth::SynthPurpose::split);
  std::int64_t fixed_points = 0, differ = 0;
  for (std::int64_t x = 0; x < 1000; ++x) fixed_points += a(x) == x, differ += a(x) != b(x);
  CHECK(fixed_points < 10);
  CHECK(differ > 950);
}

TEST_CASE("generate_sbm is deterministic per seed and independent of the thread count", "[datasets]") {
  const SbmOptions o = small_sbm();
  const Dataset one = test::with_threads(1, [&] { return generate_sbm(o); });
  const Dataset three = test::with_threads(3, [&] { return generate_sbm(o); });
  CHECK(same_dataset(one, three));
  CHECK(same_dataset(one, generate_sbm(o)));
  SbmOptions other = o;
  other.seed = 8;
  const Dataset different = generate_sbm(other);
  CHECK_FALSE(same_array(one.graph.indices<std::int32_t>(), different.graph.indices<std::int32_t>()));
  CHECK_FALSE(same_array(one.target().features, different.target().features));
}

TEST_CASE("generate_sbm stores exactly the distinct non-loop pairs it drew, both ways", "[datasets]") {
  const SbmOptions o = small_sbm();
  const Dataset ds = generate_sbm(o);
  const Array<std::int64_t> classes = synth::balanced_random_classes(o.nodes, o.classes, o.seed);
  CHECK(same_array(classes, ds.target().labels));
  const synth::EdgePairs pairs = synth::sbm_edge_pairs(o, classes);
  CHECK(pairs.size() == 12000);  // nodes * avg_degree / 2
  std::set<std::pair<std::int32_t, std::int32_t>> expected;
  for (std::int64_t e = 0; e < pairs.size(); ++e) {
    const std::int32_t u = pairs.src[e], v = pairs.dst[e];
    if (u != v) expected.insert({std::min(u, v), std::max(u, v)});
  }
  std::set<std::pair<std::int32_t, std::int32_t>> stored;
  const auto g = ds.graph.view<std::int32_t>();
  for (std::int64_t r = 0; r < g.num_rows; ++r)
    for (std::int64_t k = g.indptr[r]; k < g.indptr[r + 1]; ++k) {
      const std::int32_t c = g.indices[k];
      REQUIRE(c != r);
      if (c < r) stored.insert({c, static_cast<std::int32_t>(r)});
    }
  CHECK(g.num_edges == 2 * static_cast<std::int64_t>(expected.size()));
  CHECK(stored == expected);
  CHECK(ds.graph.properties().symmetric);
  CHECK_FALSE(ds.meta.directed);
}

TEST_CASE("generate_sbm reaches the requested homophily", "[datasets]") {
  SbmOptions o;
  o.nodes = 20000;
  o.avg_degree = 10;
  for (const double h : {0.8, 0.3}) {
    o.homophily = h;
    const Dataset ds = generate_sbm(o);
    CHECK(edge_homophily(ds) == Approx(h).margin(0.02));
  }
}

TEST_CASE("generate_sbm degrees are heavy-tailed and near the requested mean", "[datasets]") {
  SbmOptions o;
  o.nodes = 20000;
  o.avg_degree = 10;
  const Dataset ds = generate_sbm(o);
  const auto g = ds.graph.view<std::int32_t>();
  std::int64_t max_degree = 0;
  for (std::int64_t r = 0; r < g.num_rows; ++r) max_degree = std::max(max_degree, g.degree(r));
  const double mean = static_cast<double>(g.num_edges) / static_cast<double>(g.num_rows);
  CHECK(mean > 0.9 * o.avg_degree);
  CHECK(mean <= o.avg_degree);
  CHECK(static_cast<double>(max_degree) > 15 * mean);
}

TEST_CASE("generate_sbm labels are learnable from the features and from the graph", "[datasets]") {
  SbmOptions o;
  o.nodes = 8000;
  o.features = 32;
  o.classes = 4;
  const Dataset ds = generate_sbm(o);
  // Chance is 1/4 for both classifiers.
  CHECK(nearest_class_mean_accuracy(ds) > 0.5);
  CHECK(neighbour_majority_accuracy(ds) > 0.75);
}

TEST_CASE("generate_sbm balances the classes and splits the vertices at random", "[datasets]") {
  SbmOptions o = small_sbm();
  o.train_fraction = 0.5;
  o.valid_fraction = 0.25;
  const Dataset ds = generate_sbm(o);
  check_dataset(ds);
  std::vector<std::int64_t> per_class(static_cast<std::size_t>(o.classes), 0);
  for (const std::int64_t y : ds.target().labels) ++per_class[static_cast<std::size_t>(y)];
  CHECK(*std::max_element(per_class.begin(), per_class.end()) -
            *std::min_element(per_class.begin(), per_class.end()) <=
        1);
  CHECK(ds.split.train.size() == 1500);
  CHECK(ds.split.valid.size() == 750);
  CHECK(ds.split.test.size() == 750);
  CHECK(std::is_sorted(ds.split.train.begin(), ds.split.train.end()));
  // A random half of 0..2999 has its mean near 1500, and not all in the first half.
  double sum = 0;
  for (const std::int64_t v : ds.split.train) sum += static_cast<double>(v);
  CHECK(sum / 1500 == Approx(1500).margin(100));
  CHECK(ds.meta.name == "sbm");
  CHECK(ds.meta.split_name == "random");
  CHECK(ds.meta.num_classes == 5);
  CHECK(ds.target().features.cols() == 16);
  CHECK(ds.meta.source.find("homophily=0.8") != std::string::npos);
  CHECK(ds.meta.source.find("seed=7") != std::string::npos);
}

TEST_CASE("generate_sbm rejects options it cannot honour", "[datasets]") {
  SbmOptions o = small_sbm();
  o.homophily = 1.5;
  CHECK_THROWS_AS(generate_sbm(o), InvalidArgument);
  o = small_sbm();
  o.classes = 0;
  CHECK_THROWS_AS(generate_sbm(o), InvalidArgument);
  o = small_sbm();
  o.degree_exponent = 1.0;
  CHECK_THROWS_AS(generate_sbm(o), InvalidArgument);
  o = small_sbm();
  o.train_fraction = 0.9;
  o.valid_fraction = 0.2;
  CHECK_THROWS_WITH(generate_sbm(o), Catch::Contains("generate_sbm"));
}
