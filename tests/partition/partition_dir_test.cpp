// Tests of partition/partition_dir.*: a partition directory written and opened part by part
// holds exactly the local graphs, rows and splits computed in memory; damaged or foreign
// directories are refused naming the file; failed writes leave nothing behind.
#include "partition/partition_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "datasets/checksum.hpp"
#include "tests/partition/partition_fixtures.hpp"
#include "tests/support/skip.hpp"

using namespace halo;
using namespace halo::partition;
namespace fs = std::filesystem;

namespace {

PartitionDirInfo write_partition(const datasets::Dataset& ds, const std::string& dir, std::int32_t num_parts,
                                 Method method = Method::metis, bool force = false) {
  PartitionOptions o;
  o.method = method;
  o.num_parts = num_parts;
  const PartitionInput input = build_partition_input(ds, o);
  const PartitionResult result = partition_vertices(input, o);
  PartitionDirWriter writer(dir, force);
  return writer.write(ds, {"/datasets/example", "0123abcd"}, o, input.balance, result);
}

template <class T>
bool same(const Array<T>& a, const Array<T>& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && a.to_vector() == b.to_vector();
}

bool same_graph(const graph::CsrGraph& a, const graph::CsrGraph& b) {
  if (a.num_rows() != b.num_rows() || a.num_cols() != b.num_cols() || a.index_type() != b.index_type()) return false;
  if (!same(a.indptr(), b.indptr()) || !same(a.weights(), b.weights())) return false;
  return a.index_type() == graph::IndexType::i32 ? same(a.indices<std::int32_t>(), b.indices<std::int32_t>())
                                                 : same(a.indices<std::int64_t>(), b.indices<std::int64_t>());
}

// Every part read back equals the one built in memory, and its rows are the dataset's.
void check_round_trip(const datasets::Dataset& ds, const std::string& dir, std::int32_t num_parts) {
  const PartitionDirInfo info = read_partition_info(dir);
  REQUIRE(info.num_parts == num_parts);
  const UnionGraph g = union_graph(ds);
  Array<std::int32_t> parts = Array<std::int32_t>::vector(g.num_vertices);
  for (std::int32_t r = 0; r < num_parts; ++r) {
    const Part part = read_part(dir, r);
    for (std::int64_t i = 0; i < part.graph.num_owned; ++i) parts[part.graph.local_to_global[i]] = r;
  }
  const HaloPlan plan = plan_halos(g, parts, num_parts);
  const PartitionQuality quality = evaluate_partition(g, global_train_ids(ds, g), parts, plan);
  CHECK(info.quality.edge_cut == quality.edge_cut);
  CHECK(info.quality.halo_total == quality.halo_total);
  std::set<std::int64_t> train_seen;
  std::int64_t valid_seen = 0;
  const std::int64_t target_offset = g.type_offsets[static_cast<std::size_t>(g.is_hetero ? g.type_index(ds.meta.target_type) : 0)];
  for (std::int32_t r = 0; r < num_parts; ++r) {
    INFO("part " << r);
    const Part part = read_part(dir, r, PartReadOptions{true});
    const LocalGraph expected = build_local_graph(g, parts, plan, r);
    const LocalGraph& got = part.graph;
    CHECK(got.num_owned == expected.num_owned);
    CHECK(got.num_halo == expected.num_halo);
    CHECK(same(got.local_to_global, expected.local_to_global));
    CHECK(same(got.halo_owner, expected.halo_owner));
    CHECK(same(got.halo_remote_row, expected.halo_remote_row));
    CHECK(same(got.recv_offsets, expected.recv_offsets));
    CHECK(same(got.send_offsets, expected.send_offsets));
    CHECK(same(got.send_rows, expected.send_rows));
    CHECK(same(got.vertex_type, expected.vertex_type));
    CHECK(got.owned_type_offsets == expected.owned_type_offsets);
    CHECK(got.relation_keys == expected.relation_keys);
    REQUIRE(got.relations.size() == expected.relations.size());
    for (std::size_t k = 0; k < got.relations.size(); ++k) CHECK(same_graph(got.relations[k], expected.relations[k]));
    REQUIRE(part.node_types.size() == g.type_names.size());
    for (std::size_t t = 0; t < part.node_types.size(); ++t) {
      const datasets::NodeType& mine = part.node_types[t];
      const datasets::NodeType& full = ds.node_type(mine.name);
      CHECK(mine.count == expected.owned_type_offsets[t + 1] - expected.owned_type_offsets[t]);
      CHECK(mine.features.empty() == full.features.empty());
      CHECK(mine.labels.empty() == full.labels.empty());
      for (std::int64_t i = 0; i < mine.count; ++i) {
        const std::int64_t v = got.local_to_global[expected.owned_type_offsets[t] + i] - g.type_offsets[t];
        for (std::int64_t c = 0; c < mine.features.cols() && !mine.features.empty(); ++c)
          REQUIRE(mine.features.row(i)[c] == full.features.row(v)[c]);
        if (!mine.labels.empty()) REQUIRE(mine.labels[i] == full.labels[v]);
      }
    }
    for (std::int64_t row : part.split.train) {
      REQUIRE(row < got.num_owned);
      train_seen.insert(got.local_to_global[row] - target_offset);
    }
    valid_seen += part.split.valid.size();
  }
  const std::vector<std::int64_t> train = ds.split.train.to_vector();
  CHECK(train_seen == std::set<std::int64_t>(train.begin(), train.end()));
  CHECK(valid_seen == ds.split.valid.size());
}

}  // namespace

TEST_CASE("A homogeneous partition directory reads back part by part as built", "[partition]") {
  test::ScratchDir scratch;
  const datasets::Dataset ds = test::planted_sbm(500, 3, 0.8, 6);
  const PartitionDirInfo written = write_partition(ds, scratch / "parts", 3);
  CHECK(fs::exists(scratch / "parts/part-0002/graph/indices.npy"));
  CHECK(fs::exists(scratch / "parts/part-0000/node_feat.npy"));
  check_round_trip(ds, scratch / "parts", 3);
  const PartitionDirInfo info = read_partition_info(scratch / "parts");
  CHECK(info.source_path == "/datasets/example");
  CHECK(info.source_checksum == "0123abcd");
  CHECK(info.method == Method::metis);
  CHECK(info.balance == std::vector<BalanceKey>{BalanceKey::vertices});
  CHECK(info.metis_objective == written.metis_objective);
  CHECK(info.meta.name == "sbm");
  for (const PartInfo& p : info.parts)
    for (const datasets::DatasetFileEntry& f : p.files) CHECK(fs::file_size(scratch / ("parts/" + f.path)) == f.bytes);
  std::int64_t owned = 0;
  for (const PartQuality& p : info.quality.parts) owned += p.owned;
  CHECK(owned == 500);
}

TEST_CASE("A heterogeneous partition directory keeps relations, vertex types and per-type rows", "[partition]") {
  test::ScratchDir scratch;
  const datasets::Dataset ds = test::tiny_hetero();
  write_partition(ds, scratch / "parts", 2, Method::random);
  CHECK(fs::exists(scratch / "parts/part-0001/relations/paper__cites__paper/weights.npy"));
  CHECK(fs::exists(scratch / "parts/part-0001/vertex_type.npy"));
  CHECK_FALSE(fs::exists(scratch / "parts/part-0001/nodes/author/node_feat.npy"));
  check_round_trip(ds, scratch / "parts", 2);
  CHECK(read_partition_info(scratch / "parts").relations.size() == 2);
}

TEST_CASE("Partitions of acm write and read back", "[partition]") {
  const datasets::Dataset* acm = test::shared_dataset("acm");
  if (acm == nullptr) {
    HALO_SKIP("../shared/datasets is absent");
  }
  test::ScratchDir scratch;
  write_partition(*acm, scratch / "parts", 3);
  check_round_trip(*acm, scratch / "parts", 3);
}

TEST_CASE("PartitionDirWriter refuses an existing directory before any work, unless forced", "[partition]") {
  test::ScratchDir scratch;
  fs::create_directories(scratch / "parts");
  std::ofstream(scratch / "parts/keep.txt") << "precious";
  CHECK_THROWS_WITH(PartitionDirWriter(scratch / "parts", false), Catch::Contains("exists (use --force to replace it)"));
  CHECK(fs::exists(scratch / "parts/keep.txt"));
  write_partition(test::tiny_homogeneous(), scratch / "parts", 2, Method::metis, true);
  CHECK_FALSE(fs::exists(scratch / "parts/keep.txt"));
  CHECK(read_partition_info(scratch / "parts").num_parts == 2);
}

TEST_CASE("A failed partition write leaves no directory behind", "[partition]") {
  test::ScratchDir scratch;
  const datasets::Dataset ds = test::tiny_homogeneous();
  PartitionOptions o;
  o.num_parts = 2;
  PartitionResult bad;
  bad.parts = Array<std::int32_t>::from_vector({0, 1, 2, 0});
  {
    PartitionDirWriter writer(scratch / "parts", false);
    CHECK_THROWS_WITH(writer.write(ds, {"x", "y"}, o, {BalanceKey::vertices}, bad),
                      Catch::Contains("vertex 2 is in part 2, expected 0..1"));
  }
  CHECK(fs::is_empty(scratch.path()));
}

TEST_CASE("read_part refuses a truncated, corrupted or missing file of its own part only", "[partition]") {
  test::ScratchDir scratch;
  const datasets::Dataset ds = test::planted_sbm(400, 2, 0.8, 6);
  write_partition(ds, scratch / "parts", 2);
  const std::string file = scratch / "parts/part-0001/node_feat.npy";
  SECTION("truncated") {
    fs::resize_file(file, fs::file_size(file) - 4);
    CHECK_THROWS_WITH(read_part(scratch / "parts", 1), Catch::Contains("node_feat.npy") && Catch::Contains("truncated"));
    CHECK(read_part(scratch / "parts", 0).graph.num_owned > 0);
  }
  SECTION("corrupted in place") {
    {
      std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(-3, std::ios::end);
      f.put('\x7f');
    }
    CHECK_THROWS_WITH(read_part(scratch / "parts", 1), Catch::Contains("node_feat.npy") && Catch::Contains("CRC-32"));
    CHECK_NOTHROW(read_part(scratch / "parts", 1, PartReadOptions{false}));  // a valid value: only the CRC knows
  }
  SECTION("missing") {
    fs::remove(scratch / "parts/part-0001/send_rows.npy");
    CHECK_THROWS_AS(read_part(scratch / "parts", 1), IoError);
  }
  SECTION("rank out of range") {
    CHECK_THROWS_WITH(read_part(scratch / "parts", 2), Catch::Contains("rank 2 is not a part"));
  }
}

TEST_CASE("read_partition_info refuses a foreign or future partition.json", "[partition]") {
  test::ScratchDir scratch;
  write_partition(test::tiny_homogeneous(), scratch / "parts", 2);
  const std::string json = scratch / "parts/partition.json";
  std::ifstream in(json);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const std::string key = "\"format_version\": 1";
  REQUIRE(text.find(key) != std::string::npos);
  std::ofstream(json) << std::string(text).replace(text.find(key), key.size(), "\"format_version\": 9");
  CHECK_THROWS_WITH(read_partition_info(scratch / "parts"), Catch::Contains("format_version 9"));
  std::ofstream(json) << "{\"format\": \"something-else\"}";
  CHECK_THROWS_WITH(read_partition_info(scratch / "parts"), Catch::Contains("is not a halo partition"));
  std::ofstream(json) << "{";
  CHECK_THROWS_WITH(read_partition_info(scratch / "parts"), Catch::Contains("is not valid JSON"));
}
