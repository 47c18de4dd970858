// Corrupted dataset directories: every value that could send a reader out of bounds or train on
// wrong data is refused on open with the file, the position and the value, even when the listed
// checksums were recomputed to match (issue #24's crashes and silent acceptances).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

#include "datasets/dataset_dir.hpp"
#include "datasets/npy.hpp"
#include "datasets/synth.hpp"
#include "graph/base/error.hpp"
#include "tests/datasets/tiny_datasets.hpp"
#include "tests/support/corrupt_files.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::datasets;
namespace fs = std::filesystem;

namespace {

// A tiny homogeneous dataset (int32 indices, weights) written to dir/ds; returns its path.
std::string homogeneous_dir(const test::ScratchDir& dir) {
  write_dataset_dir(test::tiny_homogeneous(), dir / "ds", false);
  return dir / "ds";
}

template <class T>
void poke(const std::string& ds, const std::string& relative, std::int64_t index, T value) {
  test::poke_listed<T>(ds, "dataset.json", relative, index, value);
}

}  // namespace

TEST_CASE("an out-of-range column in graph/indices.npy is refused, naming the row and the value", "[dataset_dir][faults]") {
  test::ScratchDir dir;
  const std::string ds = homogeneous_dir(dir);
  const std::int32_t value = GENERATE(50000000, -7, 4);
  poke<std::int32_t>(ds, "graph/indices.npy", 2, value);
  CHECK_THROWS_WITH(read_dataset_dir(ds), ds + "/graph/indices.npy: row 2, position 0 (edge 2): column " +
                                              std::to_string(value) + " out of range, expected 0 <= column < 4");
}

TEST_CASE("an out-of-range column in int64 indices is refused", "[dataset_dir][faults]") {
  test::ScratchDir dir;
  write_dataset_dir(test::tiny_homogeneous(true), dir / "ds", false);
  poke<std::int64_t>(dir / "ds", "graph/indices.npy", 3, std::int64_t{1} << 40);
  CHECK_THROWS_WITH(read_dataset_dir(dir / "ds"), Catch::Contains("graph/indices.npy: row 2, position 1 (edge 3): column 1099511627776 out of range"));
}

TEST_CASE("a graph/indptr.npy that jumps, goes back or starts elsewhere blames the file, not the program", "[dataset_dir][faults]") {
  test::ScratchDir dir;
  const std::string ds = homogeneous_dir(dir);
  const std::string indptr = ds + "/graph/indptr.npy";
  SECTION("a middle value of 2^40") {
    poke<std::int64_t>(ds, "graph/indptr.npy", 2, std::int64_t{1} << 40);
    CHECK_THROWS_WITH(read_dataset_dir(ds), indptr + ": indptr decreases after row 2: indptr[2] = 1099511627776 > indptr[3] = 4");
  }
  SECTION("a middle value of -100") {
    poke<std::int64_t>(ds, "graph/indptr.npy", 2, std::int64_t{-100});
    CHECK_THROWS_WITH(read_dataset_dir(ds), indptr + ": indptr decreases after row 1: indptr[1] = 1 > indptr[2] = -100");
  }
  SECTION("a first value other than 0") {
    poke<std::int64_t>(ds, "graph/indptr.npy", 0, std::int64_t{1});
    CHECK_THROWS_WITH(read_dataset_dir(ds), indptr + ": indptr[0] is 1, expected 0");
  }
  SECTION("a last value other than the edge count") {
    poke<std::int64_t>(ds, "graph/indptr.npy", 4, std::int64_t{5});
    CHECK_THROWS_WITH(read_dataset_dir(ds), indptr + ": indptr ends at 5, expected the edge count 4");
  }
}

TEST_CASE("a non-finite edge weight is refused", "[dataset_dir][faults]") {
  test::ScratchDir dir;
  const std::string ds = homogeneous_dir(dir);
  poke<float>(ds, "graph/weights.npy", 1, std::numeric_limits<float>::infinity());
  CHECK_THROWS_WITH(read_dataset_dir(ds), ds + "/graph/weights.npy: row 1, position 0 (edge 1): weight inf is not finite");
}

TEST_CASE("a NaN or an infinity among the features is refused with its row and column", "[dataset_dir][faults]") {
  test::ScratchDir dir;
  const std::string ds = homogeneous_dir(dir);
  const float value = GENERATE(std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity());
  poke<float>(ds, "node_feat.npy", 7, value);  // row 2, column 1 of 4 x 3
  CHECK_THROWS_WITH(read_dataset_dir(ds), Catch::StartsWith(ds + "/node_feat.npy: value at row 2, column 1 is ") &&
                                              Catch::EndsWith(", not a finite number"));
}

TEST_CASE("a label below -1 or at least num_classes is refused", "[dataset_dir][faults]") {
  test::ScratchDir dir;
  const std::string ds = homogeneous_dir(dir);
  const std::int64_t value = GENERATE(std::int64_t{3}, std::int64_t{-2}, std::int64_t{1} << 40);
  poke<std::int64_t>(ds, "node_label.npy", 1, value);
  CHECK_THROWS_WITH(read_dataset_dir(ds), ds + "/node_label.npy: label of vertex 1 is " + std::to_string(value) +
                                              ", expected -1 (unlabelled) or a class in [0, 3)");
}

TEST_CASE("a split id outside the labelled vertices is refused", "[dataset_dir][faults]") {
  test::ScratchDir dir;
  const std::string ds = homogeneous_dir(dir);
  poke<std::int64_t>(ds, "split/test.npy", 0, std::int64_t{4});
  CHECK_THROWS_WITH(read_dataset_dir(ds), ds + "/split/test.npy: entry 0 is 4, outside the vertex ids of the labelled type [0, 4)");
}

TEST_CASE("an out-of-range id in a relation of a heterogeneous dataset is refused, naming the relation's file", "[dataset_dir][faults]") {
  test::ScratchDir dir;
  write_dataset_dir(test::tiny_hetero(), dir / "ds", false);
  const std::string ds = dir / "ds";
  SECTION("int64 ids of author -> paper") {
    const std::int64_t value = GENERATE(std::int64_t{2}, std::int64_t{7167}, std::int64_t{2147483647}, std::int64_t{-1});
    poke<std::int64_t>(ds, "relations/author__writes__paper/indices.npy", 1, value);
    CHECK_THROWS_WITH(read_dataset_dir(ds), ds + "/relations/author__writes__paper/indices.npy: row 1, position 0 (edge 1): column " +
                                                std::to_string(value) + " out of range, expected 0 <= column < 2");
  }
  SECTION("int32 ids of paper -> paper") {
    poke<std::int32_t>(ds, "relations/paper__cites__paper/indices.npy", 2, 100000);
    CHECK_THROWS_WITH(read_dataset_dir(ds), Catch::Contains("paper__cites__paper/indices.npy: row 1, position 0 (edge 2): column 100000"));
  }
}

TEST_CASE("a flipped byte is caught by the checksum on every open, unless told not to verify", "[dataset_dir][faults]") {
  test::ScratchDir dir;
  const std::string ds = homogeneous_dir(dir);
  const std::string feat = ds + "/node_feat.npy";
  test::flip_byte(feat, read_npy_header(feat).data_offset + 5);
  CHECK_THROWS_WITH(read_dataset_dir(ds), Catch::StartsWith(feat + ": CRC-32 is ") && Catch::Contains("the file is corrupted"));
  DatasetDirOptions no_crc;
  no_crc.verify_checksums = false;
  CHECK_NOTHROW(read_dataset_dir(ds, no_crc));  // a valid value: only the checksum knows
}

TEST_CASE("a label file replaced by a link to another file of the same size is caught by its checksum", "[dataset_dir][faults]") {
  test::ScratchDir dir;
  const std::string ds = homogeneous_dir(dir);
  // Another int64 array of the same size, with valid labels, stands in for the labels.
  write_npy(dir / "other.npy", Array<std::int64_t>::from_vector({0, 1, 2, 0}));
  REQUIRE(fs::file_size(dir / "other.npy") == fs::file_size(ds + "/node_label.npy"));
  fs::remove(ds + "/node_label.npy");
  fs::create_symlink(dir / "other.npy", ds + "/node_label.npy");
  CHECK_THROWS_WITH(read_dataset_dir(ds), Catch::StartsWith(ds + "/node_label.npy: CRC-32 is "));
}

TEST_CASE("the checks' own pass verifies the CRC-32 of arrays of many blocks and windows", "[dataset_dir][faults]") {
  // 41000 x 128 features (5.2 M floats: six of check_finite's 4 MiB windows, each of many 256 KiB
  // blocks) and a few hundred thousand column ids: the CRC the checks compute block by block,
  // joined to the header's, must be the file's.
  test::ScratchDir dir;
  SbmOptions o;
  o.nodes = 41000;
  o.features = 128;
  o.avg_degree = 8;
  write_dataset_dir(generate_sbm(o), dir / "ds", false);
  const std::string ds = dir / "ds";
  const std::string feat = ds + "/node_feat.npy";
  const std::uint64_t data = read_npy_header(feat).data_offset;
  CHECK_NOTHROW(read_dataset_dir(ds));
  SECTION("a flipped byte in the fifth window") {
    test::flip_byte(feat, data + 4 * 4 * (std::uint64_t{1} << 20) + 12345);
    CHECK_THROWS_WITH(read_dataset_dir(ds), Catch::StartsWith(feat + ": CRC-32 is "));
  }
  SECTION("a flipped byte in the header: refused by its parser or by the header's CRC, naming the file") {
    const std::uint64_t at = GENERATE_COPY(std::uint64_t{20}, data - 2);
    test::flip_byte(feat, at);
    CHECK_THROWS_WITH(read_dataset_dir(ds), Catch::StartsWith(feat + ": "));
  }
  SECTION("a flipped byte deep in the column ids, which the CRC reports before the column it breaks") {
    const std::string indices = ds + "/graph/indices.npy";
    test::flip_byte(indices, read_npy_header(indices).data_offset + 4 * 200001 + 3);
    CHECK_THROWS_WITH(read_dataset_dir(ds), Catch::StartsWith(indices + ": CRC-32 is "));
  }
  SECTION("a NaN in the last window with its checksum recomputed: the value, named by row and column") {
    poke<float>(ds, "node_feat.npy", 40999 * 128 + 7, std::numeric_limits<float>::quiet_NaN());
    CHECK_THROWS_WITH(read_dataset_dir(ds), feat + ": value at row 40999, column 7 is nan, not a finite number");
  }
}
