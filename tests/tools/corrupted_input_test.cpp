// Every program that reads a dataset or a partition refuses a corrupted one with a one-line error
// naming the file and the value, exit 1, never a crash: values out of range with their listed
// CRC-32s recomputed (only the structural checks can catch them, and --no-verify keeps those), and
// a flipped byte that only the CRC-32 can catch (and --no-verify lets through). Issue #24.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "datasets/npy.hpp"
#include "tests/support/corrupt_files.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/tools/run_program.hpp"

using halo::test::ScratchDir;
using Result = halo::test::ProgramResult;

namespace {

// A 500-vertex SBM dataset directory in the scratch directory.
std::string make_dataset(const ScratchDir& scratch) {
  const std::string dir = scratch / "sbm";
  const Result r = halo::test::run_program("halo-convert", "synth sbm " + dir + " --nodes 500 --avg-degree 8 --features 16 -q",
                                           scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return dir;
}

// Entry `index` of the index array `relative` (int32 or int64) becomes `value`, its CRC-32 relisted
// in `json_name`.
void poke_index(const std::string& dir, const std::string& json_name, const std::string& relative, std::int64_t index,
                std::int64_t value) {
  if (halo::datasets::read_npy_header(dir + "/" + relative).dtype == halo::datasets::DType::int32)
    halo::test::poke_listed<std::int32_t>(dir, json_name, relative, index, static_cast<std::int32_t>(value));
  else
    halo::test::poke_listed<std::int64_t>(dir, json_name, relative, index, value);
}

}  // namespace

TEST_CASE("halo-train, halo-partition and halo-bench refuse a column out of range, with or without --no-verify",
          "[tools][faults]") {
  ScratchDir scratch;
  const std::string data = make_dataset(scratch);
  poke_index(data, "dataset.json", "graph/indices.npy", 7, 50000000);
  const std::string file = data + "/graph/indices.npy";
  const std::string args = "--dataset " + data + " --epochs 2 --threads 1";
  for (const std::string no_verify : {"", " --no-verify"}) {
    halo::test::check_one_line_error(halo::test::run_program("halo-train", args + no_verify, scratch), "halo-train",
                                     {file, "column 50000000 out of range"});
    halo::test::check_one_line_error(
        halo::test::run_program("halo-partition", data + " --parts 2 -q -o " + (scratch / "parts") + no_verify, scratch),
        "halo-partition", {file, "column 50000000 out of range"});
  }
  halo::test::check_one_line_error(halo::test::run_program("halo-bench", "spmm --dataset " + data, scratch), "halo-bench",
                                   {file, "column 50000000 out of range"});
}

TEST_CASE("halo-train refuses a flipped feature byte by its CRC-32, and --no-verify skips only that check",
          "[tools][faults]") {
  ScratchDir scratch;
  const std::string data = make_dataset(scratch);
  const std::string features = data + "/node_feat.npy";
  // The lowest byte of the first feature: the value stays finite, only the CRC-32 can tell.
  halo::test::flip_byte(features, halo::datasets::read_npy_header(features).data_offset);
  const std::string args = "--dataset " + data + " --epochs 2 --threads 1 -q";
  halo::test::check_one_line_error(halo::test::run_program("halo-train", args, scratch), "halo-train",
                                   {features, "CRC-32", "corrupted"});
  const Result skipped = halo::test::run_program("halo-train", args + " --no-verify", scratch);
  INFO(skipped.err);
  CHECK(skipped.exit_code == 0);
}

TEST_CASE("halo-train --partitions refuses a part whose local graph has a column out of range", "[tools][faults]") {
  ScratchDir scratch;
  const std::string data = make_dataset(scratch);
  const std::string parts = scratch / "p1";
  const Result partitioned = halo::test::run_program("halo-partition", data + " --parts 1 -q -o " + parts, scratch);
  INFO(partitioned.err);
  REQUIRE(partitioned.exit_code == 0);
  poke_index(parts, "partition.json", "part-0000/graph/indices.npy", 3, 1 << 30);
  for (const std::string no_verify : {"", " --no-verify"}) {
    halo::test::check_one_line_error(
        halo::test::run_program("halo-train", "--partitions " + parts + " --epochs 2 --threads 1" + no_verify, scratch),
        "halo-train", {parts + "/part-0000/graph/indices.npy", "column 1073741824 out of range"});
  }
}
