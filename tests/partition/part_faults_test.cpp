// Corrupted partition directories: a part whose local graph, halo maps, offsets, rows or values
// are out of range is refused on open with the file, the position and the value, even when
// partition.json's checksums were recomputed to match (issue #24: these crashed a rank or
// trained on wrong data).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "datasets/npy.hpp"
#include "graph/base/error.hpp"
#include "partition/partition_dir.hpp"
#include "tests/partition/partition_fixtures.hpp"
#include "tests/support/corrupt_files.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/write_partition.hpp"

using namespace halo;
using namespace halo::partition;

namespace {

// A 2-part random partition of a 400-vertex SBM graph; returns the partition directory.
std::string two_parts(const test::ScratchDir& scratch) {
  return test::write_random_partition(test::planted_sbm(400, 2, 0.8, 6), scratch, 2);
}

template <class T>
void poke(const std::string& parts, const std::string& relative, std::int64_t index, T value) {
  test::poke_listed<T>(parts, "partition.json", relative, index, value);
}

}  // namespace

TEST_CASE("a part whose local graph has an out-of-range column is refused", "[partition][faults]") {
  test::ScratchDir scratch;
  const std::string parts = two_parts(scratch);
  const Part part = read_part(parts, 1);
  const std::int64_t columns = part.graph.num_local();
  const auto dtype = datasets::read_npy_header(parts + "/part-0001/graph/indices.npy").dtype;
  if (dtype == datasets::DType::int32) {
    poke<std::int32_t>(parts, "part-0001/graph/indices.npy", 0, static_cast<std::int32_t>(columns));
  } else {
    poke<std::int64_t>(parts, "part-0001/graph/indices.npy", 0, columns);
  }
  CHECK_THROWS_WITH(read_part(parts, 1), Catch::StartsWith(parts + "/part-0001/graph/indices.npy: row ") &&
                                             Catch::Contains("column " + std::to_string(columns) + " out of range"));
  CHECK_NOTHROW(read_part(parts, 0));  // the other part is sound
}

TEST_CASE("a part's local graph offsets that decrease are refused", "[partition][faults]") {
  test::ScratchDir scratch;
  const std::string parts = two_parts(scratch);
  poke<std::int64_t>(parts, "part-0000/graph/indptr.npy", 3, std::int64_t{-100});
  CHECK_THROWS_WITH(read_part(parts, 0), Catch::StartsWith(parts + "/part-0000/graph/indptr.npy: indptr decreases after row 2"));
}

TEST_CASE("halo maps out of range are refused", "[partition][faults]") {
  test::ScratchDir scratch;
  const std::string parts = two_parts(scratch);
  const std::string part = parts + "/part-0000/";
  SECTION("a global id past the vertices") {
    poke<std::int64_t>(parts, "part-0000/local_to_global.npy", 5, std::int64_t{400});
    CHECK_THROWS_WITH(read_part(parts, 0), part + "local_to_global.npy: entry 5 is 400, outside the global vertex ids [0, 400)");
  }
  SECTION("a halo owner that is no part") {
    poke<std::int32_t>(parts, "part-0000/halo_owner.npy", 0, 7);
    CHECK_THROWS_WITH(read_part(parts, 0), part + "halo_owner.npy: entry 0 is 7, outside the part numbers [0, 2)");
  }
  SECTION("a halo owner that is the part itself") {
    poke<std::int32_t>(parts, "part-0000/halo_owner.npy", 0, 0);
    CHECK_THROWS_WITH(read_part(parts, 0), part + "halo_owner.npy: entry 0 names this part (0) as the owner of a halo row");
  }
  SECTION("a halo row past its owner's rows") {
    poke<std::int64_t>(parts, "part-0000/halo_remote_row.npy", 1, std::int64_t{1} << 40);
    CHECK_THROWS_WITH(read_part(parts, 0), Catch::StartsWith(part + "halo_remote_row.npy: entry 1 is 1099511627776, outside "
                                                                    "the owned rows [0, "));
  }
  SECTION("a row sent that the part does not own") {
    poke<std::int64_t>(parts, "part-0000/send_rows.npy", 0, std::int64_t{-1});
    CHECK_THROWS_WITH(read_part(parts, 0), Catch::StartsWith(part + "send_rows.npy: entry 0 is -1, outside the owned rows"));
  }
  SECTION("receive offsets that do not cover the halo") {
    poke<std::int64_t>(parts, "part-0000/recv_offsets.npy", 2, std::int64_t{1} << 40);
    CHECK_THROWS_WITH(read_part(parts, 0), Catch::StartsWith(part + "recv_offsets.npy: offsets end at 1099511627776, expected "));
  }
  SECTION("a split row outside the owned rows") {
    poke<std::int64_t>(parts, "part-0000/split/train.npy", 0, std::int64_t{1000});
    CHECK_THROWS_WITH(read_part(parts, 0), Catch::StartsWith(part + "split/train.npy: entry 0 is 1000, outside the owned rows"));
  }
}

TEST_CASE("a part's non-finite feature or out-of-range label is refused", "[partition][faults]") {
  test::ScratchDir scratch;
  const std::string parts = two_parts(scratch);
  SECTION("NaN") {
    poke<float>(parts, "part-0001/node_feat.npy", 0, std::numeric_limits<float>::quiet_NaN());
    CHECK_THROWS_WITH(read_part(parts, 1), parts + "/part-0001/node_feat.npy: value at row 0, column 0 is nan, not a finite number");
  }
  SECTION("label") {
    poke<std::int64_t>(parts, "part-0001/node_label.npy", 3, std::int64_t{2});
    CHECK_THROWS_WITH(read_part(parts, 1), parts + "/part-0001/node_label.npy: label of vertex 3 is 2, expected -1 "
                                                   "(unlabelled) or a class in [0, 2)");
  }
}
