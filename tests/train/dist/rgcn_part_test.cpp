// Tests of train/dist/rgcn_part.*: the parts of a generated heterogeneous dataset, renumbered type
// by type, own every vertex exactly once, give back every relation row of the dataset with its
// entries in ascending global id, and carry per-type send lists that match their peers' halo
// lists; a homogeneous part is refused.
#include "train/dist/rgcn_part.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/synth.hpp"
#include "partition/partition_dir.hpp"
#include "tests/support/generated_hetero.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/write_partition.hpp"

using namespace halo;
using namespace halo::train::dist;

TEST_CASE("rgcn_part renumbers each type and gives back every relation row in global-id order", "[train]") {
  const datasets::Dataset ds = test::generated_hetero();
  test::ScratchDir scratch;
  const int parts = 3;
  const std::string dir = test::write_random_partition(ds, scratch, parts);
  const partition::PartitionDirInfo info = partition::read_partition_info(dir);
  std::vector<RgcnPart> views;
  for (int p = 0; p < parts; ++p) views.push_back(rgcn_part(partition::read_part(dir, p), info));

  const int types = ds.hetero.num_vertex_types();
  for (int t = 0; t < types; ++t) {
    CAPTURE(t);
    const auto ts = static_cast<std::size_t>(t);
    const std::int64_t offset = views[0].type_offsets[ts];
    // Every vertex of the type is an output of exactly one part, which lists it as one of its
    // first num_outputs[t] input rows.
    std::vector<int> owners(static_cast<std::size_t>(ds.hetero.vertex_count(t)), 0);
    for (const RgcnPart& v : views) {
      REQUIRE(v.global_ids[ts].size() == v.num_inputs[ts]);
      for (std::int64_t i = 0; i < v.num_outputs[ts]; ++i) ++owners[static_cast<std::size_t>(v.global_ids[ts][i] - offset)];
    }
    CHECK(std::all_of(owners.begin(), owners.end(), [](int n) { return n == 1; }));
  }
  for (int r = 0; r < ds.hetero.num_relations(); ++r) {
    const graph::CsrGraph& whole = ds.hetero.relation(r);
    const graph::CsrGraph sorted = whole.clone();
    std::int64_t rows_seen = 0;
    for (const RgcnPart& v : views) {
      CAPTURE(r, v.exchange_graphs[0].rank);
      REQUIRE(v.relation_types[static_cast<std::size_t>(r)] == ds.hetero.relation_type(r));
      const auto src = static_cast<std::size_t>(v.relation_src[static_cast<std::size_t>(r)]);
      const auto dst = static_cast<std::size_t>(v.relation_dst[static_cast<std::size_t>(r)]);
      const graph::CsrGraph& local = v.relations[static_cast<std::size_t>(r)];
      REQUIRE(local.num_rows() == v.num_outputs[dst]);
      REQUIRE(local.num_cols() == v.num_inputs[src]);
      const std::vector<std::int64_t> indptr = local.indptr().to_vector();
      const std::vector<std::int32_t> indices = local.indices<std::int32_t>().to_vector();
      for (std::int64_t i = 0; i < local.num_rows(); ++i, ++rows_seen) {
        const std::int64_t row = v.global_ids[dst][i] - v.type_offsets[dst];
        std::vector<std::int64_t> expected;
        graph::visit(whole, [&](auto w) {
          for (std::int64_t e = w.indptr[row]; e < w.indptr[row + 1]; ++e)
            expected.push_back(static_cast<std::int64_t>(w.indices[e]) + v.type_offsets[src]);
        });
        std::sort(expected.begin(), expected.end());
        std::vector<std::int64_t> got;
        for (std::int64_t e = indptr[static_cast<std::size_t>(i)]; e < indptr[static_cast<std::size_t>(i) + 1]; ++e)
          got.push_back(v.global_ids[src][indices[static_cast<std::size_t>(e)]]);
        CHECK(got == expected);  // the same entries, ascending global id
      }
    }
    CHECK(rows_seen == whole.num_rows());
  }
  // Part p's send list of type t to q holds, in order, the owned rows whose global ids are q's
  // halo rows of type t from p.
  for (int t = 0; t < types; ++t)
    for (int p = 0; p < parts; ++p)
      for (int q = 0; q < parts; ++q) {
        CAPTURE(t, p, q);
        const auto ts = static_cast<std::size_t>(t);
        const partition::LocalGraph& from = views[static_cast<std::size_t>(p)].exchange_graphs[ts];
        const partition::LocalGraph& to = views[static_cast<std::size_t>(q)].exchange_graphs[ts];
        std::vector<std::int64_t> sent, halo;
        for (std::int64_t k = from.send_offsets[q]; k < from.send_offsets[q + 1]; ++k)
          sent.push_back(from.local_to_global[from.send_rows[k]]);
        for (std::int64_t h = to.recv_offsets[p]; h < to.recv_offsets[p + 1]; ++h)
          halo.push_back(to.local_to_global[to.num_owned + h]);
        CHECK(sent == halo);
        if (p == q) CHECK(sent.empty());
      }
}

TEST_CASE("rgcn_part refuses the part of a homogeneous dataset", "[train]") {
  datasets::SbmOptions o;
  o.nodes = 60;
  o.features = 4;
  test::ScratchDir scratch;
  const std::string dir = test::write_random_partition(datasets::generate_sbm(o), scratch, 2);
  CHECK_THROWS_WITH(rgcn_part(partition::read_part(dir, 0), partition::read_partition_info(dir)),
                    Catch::Contains("not of a heterogeneous dataset"));
}
