// Tests of tools/common/folder_hints.*, through the programs: a folder of the wrong kind (a halo
// dataset, a partition, an OGB folder, a folder without raw/) is refused in one line that says
// what the folder is and which command or flag takes it; a split that does not exist is refused
// with the splits that do.
#include "tools/common/folder_hints.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "tests/support/test_paths.hpp"
#include "tests/tools/run_program.hpp"

using halo::test::check_one_line_error;
using halo::test::run_program;
using halo::test::ScratchDir;
using halo::tools::FolderKind;
using halo::tools::folder_kind;

namespace {

// A halo dataset directory and its two-part partition in `scratch`.
struct Folders {
  std::string dataset;
  std::string partition;
  std::string ogb = halo::test::source_dir() + "/tests/data/ogb/tiny";
};

Folders make_folders(const ScratchDir& scratch) {
  Folders f;
  f.dataset = scratch / "sbm";
  f.partition = scratch / "sbm-p2";
  const auto convert = run_program("halo-convert", "synth sbm " + f.dataset + " --nodes 200 --features 4 -q", scratch);
  REQUIRE(convert.exit_code == 0);
  const auto cut = run_program("halo-partition", f.dataset + " --parts 2 --method random -o " + f.partition + " -q",
                               scratch);
  INFO(cut.err);
  REQUIRE(cut.exit_code == 0);
  return f;
}

}  // namespace

TEST_CASE("folder_kind tells a dataset, a partition and an OGB folder apart by their top-level names", "[tools]") {
  ScratchDir scratch;
  const Folders f = make_folders(scratch);
  CHECK(folder_kind(f.dataset) == FolderKind::halo_dataset);
  CHECK(folder_kind(f.partition) == FolderKind::halo_partition);
  CHECK(folder_kind(f.ogb) == FolderKind::ogb_dataset);
  CHECK(folder_kind(scratch.path()) == FolderKind::other);
  CHECK(folder_kind(scratch / "nope") == FolderKind::missing);
}

TEST_CASE("the programs refuse a folder of the wrong kind in one line naming the command that takes it", "[tools]") {
  ScratchDir scratch;
  const Folders f = make_folders(scratch);
  SECTION("halo-train --dataset an OGB folder") {
    check_one_line_error(run_program("halo-train", "--dataset " + f.ogb, scratch), "halo-train",
                         {"OGB dataset folder", "halo-convert ogb " + f.ogb});
  }
  SECTION("halo-train --dataset a partition") {
    check_one_line_error(run_program("halo-train", "--dataset " + f.partition, scratch), "halo-train",
                         {"partition directory", "--partitions " + f.partition});
  }
  SECTION("halo-train --partitions a dataset") {
    check_one_line_error(run_program("halo-train", "--partitions " + f.dataset, scratch), "halo-train",
                         {"not a partition", "--dataset " + f.dataset, "halo-partition " + f.dataset});
  }
  SECTION("halo-convert ogb a halo dataset, or a folder without raw/") {
    check_one_line_error(run_program("halo-convert", "ogb " + f.dataset + " " + (scratch / "out"), scratch),
                         "halo-convert", {"already a halo dataset directory"});
    check_one_line_error(run_program("halo-convert", "ogb " + scratch.path() + " " + (scratch / "out"), scratch),
                         "halo-convert", {"has no raw/ folder", "split/<name>/"});
  }
  SECTION("halo-convert info a partition, halo-partition info a dataset") {
    check_one_line_error(run_program("halo-convert", "info " + f.partition, scratch), "halo-convert",
                         {"halo-partition info " + f.partition});
    check_one_line_error(run_program("halo-partition", "info " + f.dataset, scratch), "halo-partition",
                         {"halo-train --dataset " + f.dataset});
  }
  SECTION("halo-partition an OGB folder") {
    check_one_line_error(run_program("halo-partition", f.ogb + " --parts 2 -o " + (scratch / "out"), scratch),
                         "halo-partition", {"halo-convert ogb " + f.ogb});
  }
  CHECK_FALSE(std::filesystem::exists(scratch / "out"));
}

TEST_CASE("halo-convert ogb refuses a split that does not exist, listing those that do", "[tools]") {
  ScratchDir scratch;
  const std::string ogb = halo::test::source_dir() + "/tests/data/ogb/tiny";
  check_one_line_error(run_program("halo-convert", "ogb " + ogb + " " + (scratch / "out") + " --split nope", scratch),
                       "halo-convert", {"split/nope: no such split folder", "holds fixed, other"});
}
