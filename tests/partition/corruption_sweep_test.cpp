// The corruption sweep of issue #24: one seeded random byte of one array file flipped at a time,
// in a dataset directory and in a 3-part partition of it, and in cora and acm converted from
// ../shared/datasets when that folder is there. Opened as every program opens them (CRC-32s
// verified), each flip is refused with an IoError naming the file; opened with --no-verify's
// options, a flip may be read (the CRC was the check skipped) or refused, but never crashes a
// reader. 24 trials in the unit label, 200 in the slow one.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "datasets/dataset_dir.hpp"
#include "datasets/ogb_reader.hpp"
#include "graph/base/error.hpp"
#include "partition/partition_dir.hpp"
#include "tests/partition/partition_fixtures.hpp"
#include "tests/support/corrupt_files.hpp"
#include "tests/support/write_partition.hpp"

using namespace halo;

namespace {

struct Target {
  std::string path;   // the array file
  std::uint64_t bytes = 0;
  int rank = -1;      // the part it belongs to; -1 = a dataset directory
  std::string dataset;  // that directory
};

// Every array file of the dataset directory `dir`.
void add_dataset_files(const std::string& dir, std::vector<Target>& targets) {
  for (const datasets::DatasetFileEntry& f : datasets::read_dataset_dir_info(dir).files)
    targets.push_back({dir + "/" + f.path, f.bytes, -1, dir});
}

// Reads what `t` belongs to with or without the CRC-32 check.
void open_owner(const Target& t, const std::string& parts, bool verify) {
  if (t.rank < 0) {
    datasets::DatasetDirOptions options;
    options.verify_checksums = verify;
    datasets::read_dataset_dir(t.dataset, options);
  } else {
    partition::read_part(parts, t.rank, {verify});
  }
}

void sweep(int trials, std::uint32_t seed) {
  test::ScratchDir scratch;
  const std::string parts = test::write_random_partition(test::planted_sbm(600, 3, 0.8, 6), scratch, 3);
  const std::string dataset = scratch / "dataset";
  std::vector<Target> targets;
  add_dataset_files(dataset, targets);
  for (const partition::PartInfo& part : partition::read_partition_info(parts).parts)
    for (const datasets::DatasetFileEntry& f : part.files)
      targets.push_back({parts + "/" + f.path, f.bytes, part.rank, std::string()});
  const std::string shared = test::shared_datasets_dir();
  if (!shared.empty() && std::filesystem::exists(shared + "/cora") && std::filesystem::exists(shared + "/acm")) {
    for (const char* name : {"cora", "acm"}) {
      datasets::write_dataset_dir(datasets::read_ogb(shared + "/" + name), scratch / name, false);
      add_dataset_files(scratch / name, targets);
    }
  } else {
    WARN("no shared cora and acm (../shared/datasets): the sweep covers the generated dataset and its partition only");
  }
  std::mt19937_64 random(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const Target& t = targets[random() % targets.size()];
    const std::uint64_t offset = random() % t.bytes;
    INFO("trial " << trial << ": byte " << offset << " of " << t.path);
    test::flip_byte(t.path, offset);
    CHECK_THROWS_WITH(open_owner(t, parts, true), Catch::Contains(t.path));
    try {
      open_owner(t, parts, false);
    } catch (const IoError&) {
      // a refusal is a fine outcome without the CRC too; anything else fails the test
    }
    test::flip_byte(t.path, offset);  // xor again: the file as it was
    CHECK_NOTHROW(open_owner(t, parts, true));
  }
}

}  // namespace

TEST_CASE("a flipped byte in any array file of a dataset or a part is refused on open, naming the file",
          "[partition][faults]") {
  sweep(24, 1);
}

TEST_CASE("the corruption sweep, 200 flips", "[partition][faults][slow]") { sweep(200, 2); }
