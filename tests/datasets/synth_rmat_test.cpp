// Tests of datasets/synth_rmat.cpp: determinism, the graph against the raw pairs it was built
// from, the quadrant probabilities, the vertex-id scrambling, degree skew and learnability.
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

RmatOptions small_rmat() {
  RmatOptions o;
  o.scale = 12;
  o.edge_factor = 8;
  o.features = 16;
  o.classes = 4;
  o.seed = 5;
  return o;
}

using Pair = std::pair<std::int32_t, std::int32_t>;

// The stored entries as (source, destination) = (column, row) pairs.
std::multiset<Pair> stored_pairs(const Dataset& ds) {
  std::multiset<Pair> pairs;
  const auto g = ds.graph.view<std::int32_t>();
  for (std::int64_t r = 0; r < g.num_rows; ++r)
    for (std::int64_t k = g.indptr[r]; k < g.indptr[r + 1]; ++k)
      pairs.insert({g.indices[k], static_cast<std::int32_t>(r)});
  return pairs;
}

}  // namespace

TEST_CASE("generate_rmat is deterministic per seed and independent of the thread count", "[datasets]") {
  const RmatOptions o = small_rmat();
  const Dataset one = test::with_threads(1, [&] { return generate_rmat(o); });
  const Dataset three = test::with_threads(3, [&] { return generate_rmat(o); });
  CHECK(same_array(one.graph.indptr(), three.graph.indptr()));
  CHECK(same_array(one.graph.indices<std::int32_t>(), three.graph.indices<std::int32_t>()));
  CHECK(same_array(one.target().features, three.target().features));
  CHECK(same_array(one.target().labels, three.target().labels));
  CHECK(same_array(one.split.train, three.split.train));
  CHECK(same_array(one.split.test, three.split.test));
  RmatOptions other = o;
  other.seed = 6;
  CHECK_FALSE(same_array(one.graph.indices<std::int32_t>(), generate_rmat(other).graph.indices<std::int32_t>()));
}

TEST_CASE("generate_rmat stores each distinct non-loop pair it drew, both ways when symmetrised", "[datasets]") {
  const RmatOptions o = small_rmat();
  const synth::EdgePairs raw = synth::rmat_edge_pairs(o);
  REQUIRE(raw.size() == 4096 * 8);
  std::set<Pair> undirected, directed;
  for (std::int64_t e = 0; e < raw.size(); ++e) {
    const std::int32_t u = raw.src[e], v = raw.dst[e];
    REQUIRE(u >= 0);
    REQUIRE(v < 4096);
    if (u == v) continue;
    undirected.insert({std::min(u, v), std::max(u, v)});
    directed.insert({u, v});
  }

  const Dataset sym = generate_rmat(o);
  std::set<Pair> expected_sym;
  for (const Pair& p : undirected) expected_sym.insert(p), expected_sym.insert({p.second, p.first});
  const std::multiset<Pair> got_sym = stored_pairs(sym);
  CHECK(got_sym.size() == 2 * undirected.size());
  CHECK(std::set<Pair>(got_sym.begin(), got_sym.end()) == expected_sym);
  // nodes * edge_factor * 2 minus what duplicates and self loops removed.
  CHECK(sym.graph.num_edges() <= 2 * raw.size());
  CHECK(sym.graph.num_edges() > raw.size());
  CHECK_FALSE(sym.meta.directed);

  RmatOptions one_way = o;
  one_way.symmetrize = false;
  const Dataset dir = generate_rmat(one_way);
  const std::multiset<Pair> got_dir = stored_pairs(dir);
  CHECK(got_dir.size() == directed.size());
  CHECK(std::set<Pair>(got_dir.begin(), got_dir.end()) == directed);
  CHECK(dir.meta.directed);
}

TEST_CASE("generate_rmat picks the quadrants with the Graph500 probabilities", "[datasets]") {
  RmatOptions o = small_rmat();
  o.scale = 10;
  o.edge_factor = 64;
  const synth::EdgePairs raw = synth::rmat_edge_pairs(o);
  // Undo the id scrambling to see the top-level quadrant of every edge.
  const synth::RandomPermutation perm(1024, o.seed, synth::SynthPurpose::vertex_ids);
  std::vector<std::int32_t> original(1024);
  for (std::int32_t x = 0; x < 1024; ++x) original[static_cast<std::size_t>(perm(x))] = x;
  double quadrant[4] = {0, 0, 0, 0};
  for (std::int64_t e = 0; e < raw.size(); ++e) {
    const int src_bit = original[static_cast<std::size_t>(raw.src[e])] >> 9;
    const int dst_bit = original[static_cast<std::size_t>(raw.dst[e])] >> 9;
    quadrant[2 * src_bit + dst_bit] += 1.0 / static_cast<double>(raw.size());
  }
  CHECK(quadrant[0] == Approx(o.a).margin(0.01));
  CHECK(quadrant[1] == Approx(o.b).margin(0.01));
  CHECK(quadrant[2] == Approx(o.c).margin(0.01));
  CHECK(quadrant[3] == Approx(1 - o.a - o.b - o.c).margin(0.01));
}

TEST_CASE("generate_rmat with b = 1 draws the single pair (0, n - 1), scrambled", "[datasets]") {
  RmatOptions o = small_rmat();
  o.a = 0;
  o.b = 1;
  o.c = 0;
  const Dataset ds = generate_rmat(o);
  const synth::RandomPermutation perm(4096, o.seed, synth::SynthPurpose::vertex_ids);
  const auto u = static_cast<std::int32_t>(perm(0)), v = static_cast<std::int32_t>(perm(4095));
  CHECK(stored_pairs(ds) == std::multiset<Pair>{{u, v}, {v, u}});
}

TEST_CASE("generate_rmat degrees are heavy-tailed with the hub moved away from id 0", "[datasets]") {
  const RmatOptions o = small_rmat();
  const Dataset ds = generate_rmat(o);
  const auto g = ds.graph.view<std::int32_t>();
  std::int64_t hub = 0;
  for (std::int64_t r = 0; r < g.num_rows; ++r)
    if (g.degree(r) > g.degree(hub)) hub = r;
  const double mean = static_cast<double>(g.num_edges) / static_cast<double>(g.num_rows);
  CHECK(static_cast<double>(g.degree(hub)) > 20 * mean);
  // Before scrambling, vertex 0 (all quadrant choices "a" or "b") has the largest expected degree.
  const synth::RandomPermutation perm(4096, o.seed, synth::SynthPurpose::vertex_ids);
  CHECK(hub == perm(0));
  CHECK(hub != 0);
}

TEST_CASE("generate_rmat handles a vertex count that is not a power of two", "[datasets]") {
  RmatOptions o = small_rmat();
  o.nodes = 1000;
  const Dataset ds = generate_rmat(o);
  check_dataset(ds);
  CHECK(ds.num_vertices() == 1000);
  CHECK(ds.graph.num_edges() > 8000);
  CHECK(ds.split.train.size() == 600);
  CHECK(ds.split.valid.size() == 200);
  CHECK(ds.split.test.size() == 200);
  CHECK(ds.meta.name == "rmat");
  CHECK(ds.meta.source.find("nodes=1000") != std::string::npos);
}

TEST_CASE("generate_rmat labels are learnable from the features", "[datasets]") {
  RmatOptions o = small_rmat();
  o.features = 32;
  // Chance is 1/4.
  CHECK(nearest_class_mean_accuracy(generate_rmat(o)) > 0.5);
}

TEST_CASE("generate_rmat rejects options it cannot honour", "[datasets]") {
  RmatOptions o = small_rmat();
  o.a = 0.6;
  o.b = 0.3;
  o.c = 0.3;
  CHECK_THROWS_AS(generate_rmat(o), InvalidArgument);
  o = small_rmat();
  o.scale = 0;
  CHECK_THROWS_AS(generate_rmat(o), InvalidArgument);
  o = small_rmat();
  o.nodes = std::int64_t{1} << 32;
  CHECK_THROWS_WITH(generate_rmat(o), Catch::Contains("2^31 - 1"));
}
