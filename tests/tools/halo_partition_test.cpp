// Tests of the halo-partition program end to end: partitioning generated and real datasets with
// each method, the --json and info contracts, the METIS graph file for gpmetis, and bad input (one
// line on stderr, non-zero exit, no output directory, not even a temporary one).
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/skip.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/tools/run_program.hpp"

namespace fs = std::filesystem;
using halo::test::ScratchDir;
using Result = halo::test::ProgramResult;
using halo::test::slurp;

namespace {

Result run_partition(const std::string& args, const ScratchDir& scratch, const std::string& prefix = "") {
  return halo::test::run_program("halo-partition", args, scratch, prefix);
}

// A generated SBM dataset at scratch/name.
std::string make_sbm(const ScratchDir& scratch, const std::string& name, int nodes, int avg_degree = 8) {
  const Result r = halo::test::run_program("halo-convert",
                       "synth sbm " + (scratch / name) + " --nodes " + std::to_string(nodes) + " --avg-degree " +
                           std::to_string(avg_degree) + " --features 4 --classes 4 -q",
                       scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return scratch / name;
}

nlohmann::json info_json(const std::string& dir, const ScratchDir& scratch) {
  const Result r = run_partition("info " + dir + " --json -", scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

// Bad input: non-zero exit, exactly one line "halo-partition: error: ..." holding `expected`, and
// nothing named out* left in the scratch directory.
void check_refused(const Result& r, const std::string& expected, const ScratchDir& scratch) {
  INFO(r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.err.rfind("halo-partition: error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find(expected) != std::string::npos);
  for (const auto& entry : fs::directory_iterator(scratch.path()))
    CHECK(entry.path().filename().string().rfind("out", 0) != 0);
}

}  // namespace

TEST_CASE("halo-partition cuts a generated dataset, reports its stages and writes a readable directory", "[tools]") {
  ScratchDir scratch;
  const std::string ds = make_sbm(scratch, "sbm", 3000);
  const Result r = run_partition(ds + " --parts 3 -o " + (scratch / "parts") + " --json " + (scratch / "run.json"), scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("edge cut") != std::string::npos);
  for (const char* stage : {"load:", "build METIS input:", "metis:", "local graphs:", "write:"})
    CHECK(r.err.find(stage) != std::string::npos);
  const nlohmann::json run_json = nlohmann::json::parse(slurp(scratch / "run.json"));
  REQUIRE(run_json["stages"].size() == 5);
  CHECK(run_json["stages"][2]["stage"] == "metis");
  CHECK(run_json["peak_memory_bytes"].get<std::int64_t>() > 0);

  const nlohmann::json j = info_json(scratch / "parts", scratch);
  CHECK(j["num_parts"] == 3);
  CHECK(j["method"] == "metis");
  CHECK(j["edge_cut"] == run_json["edge_cut"]);
  CHECK(j["edge_cut"].get<std::int64_t>() > 0);
  CHECK(j["halo_total"].get<std::int64_t>() > 0);
  REQUIRE(j["parts"].size() == 3);
  std::int64_t owned = 0, train = 0, edges = 0;
  for (const auto& p : j["parts"]) {
    owned += p["owned"].get<std::int64_t>();
    train += p["train"].get<std::int64_t>();
    edges += p["edges"].get<std::int64_t>();
    CHECK(p["halo"].get<std::int64_t>() > 0);
  }
  CHECK(owned == 3000);
  CHECK(train == 1800);
  CHECK(edges == j["num_edges"].get<std::int64_t>());
  const Result verified = run_partition("info " + (scratch / "parts") + " --verify", scratch);
  CHECK(verified.exit_code == 0);
  CHECK(verified.out.find("replication factor") != std::string::npos);
}

TEST_CASE("halo-partition runs every method and balance", "[tools]") {
  ScratchDir scratch;
  const std::string ds = make_sbm(scratch, "sbm", 2000);
  for (const char* method : {"stream", "random", "metis"}) {
    INFO(method);
    const std::string dir = scratch / (std::string("parts-") + method);
    const Result r =
        run_partition(ds + " -p 4 --method " + method + " --balance vertices,edges,train --seed 3 -q -o " + dir, scratch);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json j = info_json(dir, scratch);
    CHECK(j["method"] == method);
    CHECK(j["balance"] == "vertices,edges,train");
    CHECK(j["parts"].size() == 4);
  }
  const Result vol = run_partition(ds + " -p 2 --objective vol -q -o " + (scratch / "parts-vol"), scratch);
  CHECK(vol.exit_code == 0);
  CHECK(info_json(scratch / "parts-vol", scratch)["objective"] == "vol");
}

TEST_CASE("halo-partition partitions cora and acm converted from ../shared/datasets", "[tools]") {
  if (halo::test::shared_datasets_dir().empty()) {
    HALO_SKIP("../shared/datasets is absent");
  }
  ScratchDir scratch;
  for (const char* name : {"cora", "acm"}) {
    INFO(name);
    const std::string ds = scratch / name;
    REQUIRE(halo::test::run_program("halo-convert", "ogb " + halo::test::shared_datasets_dir() + "/" + name + " " + ds + " -q", scratch)
                .exit_code == 0);
    const Result r = run_partition(ds + " --parts 4 -q -o " + ds + "-parts", scratch);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json j = info_json(ds + "-parts", scratch);
    std::int64_t owned = 0;
    for (const auto& p : j["parts"]) owned += p["owned"].get<std::int64_t>();
    CHECK(owned == (std::string(name) == "cora" ? 2708 : 4019 + 7167 + 60));
  }
}

TEST_CASE("halo-partition metis-graph writes the graph METIS partitions, for gpmetis", "[tools]") {
  ScratchDir scratch;
  const std::string ds = make_sbm(scratch, "sbm", 500);
  const Result r = run_partition("metis-graph " + ds + " " + (scratch / "sbm.graph"), scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(scratch / "sbm.graph");
  std::int64_t n = 0, m = 0;
  in >> n >> m;
  CHECK(n == 500);
  const nlohmann::json info = nlohmann::json::parse(halo::test::run_program("halo-convert", "info " + ds + " --json -", scratch).out);
  CHECK(2 * m == info["num_edges"].get<std::int64_t>());
}

TEST_CASE("halo-partition refuses bad input with one line on stderr and leaves no output", "[tools]") {
  ScratchDir scratch;
  const std::string ds = make_sbm(scratch, "sbm", 300);
  const std::string out = " -q -o " + (scratch / "out");
  SECTION("fewer than one part") {
    check_refused(run_partition(ds + " --parts 0" + out, scratch), "at least 1, got 0", scratch);
  }
  SECTION("more parts than vertices") {
    check_refused(run_partition(ds + " --parts 301" + out, scratch), "cannot cut 300 vertices into 301 parts", scratch);
  }
  SECTION("an unknown method") {
    check_refused(run_partition(ds + " --parts 2 --method kahip" + out, scratch), "unknown partition method 'kahip'",
                  scratch);
  }
  SECTION("an unknown balance key") {
    check_refused(run_partition(ds + " --parts 2 --balance vertices,degree" + out, scratch),
                  "unknown balance key 'degree'", scratch);
  }
  SECTION("a dataset that fails its checksum") {
    {
      std::fstream f(ds + "/node_feat.npy", std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(-2, std::ios::end);
      f.put('\x55');
    }
    check_refused(run_partition(ds + " --parts 2" + out, scratch), "the file is corrupted", scratch);
  }
  SECTION("a missing dataset") {
    check_refused(run_partition((scratch / "nowhere") + " --parts 2" + out, scratch), "dataset.json", scratch);
  }
  SECTION("METIS running out of memory") {
    const std::string big = make_sbm(scratch, "big", 100000, 20);
    check_refused(run_partition(big + " --parts 4" + out, scratch, "ulimit -v 90000; OMP_NUM_THREADS=2 "), "out of memory",
                  scratch);
  }
  SECTION("an existing output without --force") {
    fs::create_directories(scratch / "out");
    std::ofstream(scratch / "out/keep.txt") << "precious";
    const Result r = run_partition(ds + " --parts 2" + out, scratch);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("--force") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(fs::exists(scratch / "out/keep.txt"));
    CHECK(run_partition(ds + " --parts 2 --force" + out, scratch).exit_code == 0);
    CHECK_FALSE(fs::exists(scratch / "out/keep.txt"));
    CHECK(fs::exists(scratch / "out/partition.json"));
  }
}
