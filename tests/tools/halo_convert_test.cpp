// Tests of the halo-convert program end to end: the real datasets in ../shared/datasets, the
// generators, the --json contract, and bad input (one-line error, non-zero exit, no output left).

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/skip.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/tools/run_program.hpp"

namespace fs = std::filesystem;
using halo::test::ScratchDir;

namespace {

using Result = halo::test::ProgramResult;

// Runs build/bin/halo-convert with `args`, capturing stdout and stderr.
Result run_convert(const std::string& args, const ScratchDir& scratch) {
  return halo::test::run_program("halo-convert", args, scratch);
}

nlohmann::json info_json(const std::string& dir, const ScratchDir& scratch) {
  const Result r = run_convert("info " + dir + " --json -", scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

std::string shared_dataset(const std::string& name) {
  const std::string root = halo::test::shared_datasets_dir();
  return root.empty() ? std::string() : root + "/" + name;
}

// Converts the shared dataset `name` with `halo-convert ogb` and returns `info --json` of the result.
nlohmann::json converted_info(const std::string& name, const ScratchDir& scratch) {
  const Result r = run_convert("ogb " + shared_dataset(name) + " " + (scratch / "out") + " -q", scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return info_json(scratch / "out", scratch);
}

}  // namespace

TEST_CASE("halo-convert ogb then info reports the published sizes of cora, citeseer and actor", "[tools]") {
  if (halo::test::shared_datasets_dir().empty()) {
    HALO_SKIP("../shared/datasets is absent");
  }
  struct Expected {
    const char* name;
    std::int64_t nodes, edges, features, classes, train, valid, test;
  };
  const Expected cases[] = {{"cora", 2708, 10556, 1433, 7, 140, 500, 1000},
                            {"citeseer", 3327, 9104, 3703, 6, 120, 500, 1000},
                            {"actor", 7600, 30019, 932, 5, 3648, 2432, 1520}};
  for (const Expected& e : cases) {
    SECTION(e.name) {
      ScratchDir scratch;
      const nlohmann::json j = converted_info(e.name, scratch);
      CHECK(j["num_nodes"] == e.nodes);
      CHECK(j["num_edges"] == e.edges);
      CHECK(j["feature_dim"] == e.features);
      CHECK(j["num_classes"] == e.classes);
      CHECK(j["splits"]["train"] == e.train);
      CHECK(j["splits"]["valid"] == e.valid);
      CHECK(j["splits"]["test"] == e.test);
      CHECK(j["is_hetero"] == false);
    }
  }
}

TEST_CASE("halo-convert ogb then info reports the vertex types, relations and split of acm and dblp", "[tools]") {
  if (halo::test::shared_datasets_dir().empty()) {
    HALO_SKIP("../shared/datasets is absent");
  }
  SECTION("acm") {
    ScratchDir scratch;
    const nlohmann::json j = converted_info("acm", scratch);
    CHECK(j["is_hetero"] == true);
    CHECK(j["target_type"] == "paper");
    CHECK(j["node_types"] == nlohmann::json({{"paper", 4019}, {"author", 7167}, {"subject", 60}}));
    CHECK(j["num_nodes"] == 4019 + 7167 + 60);
    CHECK(j["num_edges"] == 13407 + 4019);
    CHECK(j["feature_dim"] == 1902);
    CHECK(j["num_classes"] == 3);
    CHECK(j["splits"] == nlohmann::json({{"train", 60}, {"valid", 1000}, {"test", 1000}}));
    REQUIRE(j["relations"].size() == 2);
  }
  SECTION("dblp") {
    ScratchDir scratch;
    const nlohmann::json j = converted_info("dblp", scratch);
    CHECK(j["target_type"] == "author");
    CHECK(j["node_types"] == nlohmann::json({{"author", 4057}, {"paper", 14328}, {"term", 7723}, {"conference", 20}}));
    CHECK(j["num_edges"] == 19645 + 14328 + 85810);
    CHECK(j["feature_dim"] == 334);
    CHECK(j["num_classes"] == 4);
    CHECK(j["splits"] == nlohmann::json({{"train", 80}, {"valid", 1000}, {"test", 1000}}));
    CHECK(j["relations"].size() == 3);
  }
}

TEST_CASE("halo-convert synth writes a dataset whose info matches what was asked for", "[tools]") {
  ScratchDir scratch;
  const std::string dir = scratch / "sbm";
  const Result r = run_convert("synth sbm " + dir + " --nodes 3000 --avg-degree 8 --features 16 --classes 5 --seed 7 -q --json " +
                                   (scratch / "summary.json"),
                               scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = info_json(dir, scratch);
  CHECK(j["num_nodes"] == 3000);
  CHECK(j["feature_dim"] == 16);
  CHECK(j["num_classes"] == 5);
  CHECK(j["num_edges"].get<std::int64_t>() > 3000 * 6);
  CHECK(j["num_edges"].get<std::int64_t>() <= 3000 * 8);
  std::ifstream summary_file(scratch / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(summary_file);
  CHECK(summary["num_edges"] == j["num_edges"]);
  const Result verified = run_convert("info " + dir + " --verify", scratch);
  CHECK(verified.exit_code == 0);
  CHECK(verified.out.find("vertices") != std::string::npos);
}

TEST_CASE("halo-convert reads back the binary layout that synth --layout ogb-npz writes", "[tools]") {
  ScratchDir scratch;
  REQUIRE(run_convert("synth rmat " + (scratch / "npz") + " --nodes 2000 --avg-degree 6 --features 5 --layout ogb-npz -q",
                      scratch)
              .exit_code == 0);
  CHECK(fs::exists(scratch / "npz/raw/data.npz"));
  REQUIRE(run_convert("synth rmat " + (scratch / "direct") + " --nodes 2000 --avg-degree 6 --features 5 -q", scratch)
              .exit_code == 0);
  const Result r = run_convert("ogb " + (scratch / "npz") + " " + (scratch / "ds") + " -q", scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json from_npz = info_json(scratch / "ds", scratch);
  const nlohmann::json direct = info_json(scratch / "direct", scratch);
  for (const char* key : {"num_nodes", "num_edges", "feature_dim", "num_classes", "splits"}) CHECK(from_npz[key] == direct[key]);

  // A damaged archive: one line naming it, no output.
  fs::resize_file(scratch / "npz/raw/data.npz", fs::file_size(scratch / "npz/raw/data.npz") / 2);
  const Result bad = run_convert("ogb " + (scratch / "npz") + " " + (scratch / "bad"), scratch);
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("data.npz") != std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(scratch / "bad"));
}

TEST_CASE("halo-convert --feature-dtype stores 16-bit features that info, halo-partition and halo-train keep", "[tools]") {
  ScratchDir scratch;
  const std::string f32 = scratch / "f32", f16 = scratch / "f16", bf16 = scratch / "bf16";
  for (const auto& [dir, dtype] : {std::pair{f32, "f32"}, std::pair{f16, "f16"}, std::pair{bf16, "bf16"}})
    REQUIRE(run_convert("synth sbm " + dir + " --nodes 300 --features 8 --feature-dtype " + dtype + " -q", scratch)
                .exit_code == 0);
  // Half the feature bytes, behind numpy's 128-byte header.
  CHECK(fs::file_size(f16 + "/node_feat.npy") == 128 + 300 * 8 * 2);
  CHECK(fs::file_size(bf16 + "/node_feat.npy") == 128 + 300 * 8 * 2);
  CHECK(fs::file_size(f32 + "/node_feat.npy") == 128 + 300 * 8 * 4);
  const Result info = run_convert("info " + f16, scratch);
  REQUIRE(info.exit_code == 0);
  CHECK(info.out.find("8 (stored as f16)") != std::string::npos);

  const auto train = [&](const std::string& where) {
    const Result r = halo::test::run_program("halo-train", where + " --epochs 5 --hidden 8 --threads 1 --json -", scratch);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
  };
  const nlohmann::json on_dataset = train("--dataset " + bf16);
  CHECK(on_dataset["feature_streaming"]["feature_dtype"] == "bf16");
  // A one-part partition keeps the features in 16 bits and trains to the dataset's losses.
  REQUIRE(halo::test::run_program("halo-partition", bf16 + " --parts 1 -o " + (scratch / "parts") + " -q", scratch)
              .exit_code == 0);
  CHECK(fs::file_size(scratch / "parts/part-0000/node_feat.npy") == 128 + 300 * 8 * 2);
  const nlohmann::json on_part = train("--partitions " + (scratch / "parts"));
  CHECK(on_part["feature_streaming"]["feature_dtype"] == "bf16");
  for (int e = 0; e < 5; ++e)
    CHECK(on_part["runs"][0]["epochs"][e]["loss"].get<double>() ==
          Approx(on_dataset["runs"][0]["epochs"][e]["loss"].get<double>()).epsilon(1e-5));

  // A value float16 cannot hold is refused, naming it; bfloat16 takes it; OGB's layouts stay float32.
  fs::copy(halo::test::source_dir() + "/tests/data/ogb/tiny", scratch / "tiny", fs::copy_options::recursive);
  fs::remove(scratch / "tiny/raw/node-feat.csv.gz");
  std::ofstream(scratch / "tiny/raw/node-feat.csv") << "1,0,2\n0,0,0\n3,1,0\n0,70000,1\n1,1,1\n";
  const Result big = run_convert("ogb " + (scratch / "tiny") + " " + (scratch / "big") + " --feature-dtype f16 -q", scratch);
  CHECK(big.exit_code != 0);
  CHECK(big.err.find("feature at row 3, column 1 is 70000") != std::string::npos);
  CHECK(std::count(big.err.begin(), big.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(scratch / "big"));
  CHECK(run_convert("ogb " + (scratch / "tiny") + " " + (scratch / "big") + " --feature-dtype bf16 -q", scratch).exit_code == 0);
  const Result ogb = run_convert("synth sbm " + (scratch / "o") + " --nodes 100 --layout ogb --feature-dtype f16", scratch);
  CHECK(ogb.exit_code != 0);
  CHECK(ogb.err.find("the ogb layout stores float32 features") != std::string::npos);
}

TEST_CASE("halo-convert info counts as isolated only vertices with neither in- nor out-edges", "[tools]") {
  ScratchDir scratch;
  const std::string data = halo::test::test_data_dir() + "/ogb/";
  // tiny: symmetric (add_inverse_edge), vertex 4 alone.
  REQUIRE(run_convert("ogb " + data + "tiny " + (scratch / "tiny") + " -q", scratch).exit_code == 0);
  const nlohmann::json tiny = info_json(scratch / "tiny", scratch);
  CHECK(tiny["in_degree"]["isolated"] == 1);
  CHECK(tiny["in_degree"]["min"] == 0);
  // paper___cites___paper is directed (1->0 2->0 3->1 3->2): paper 3 has no in-edge but is not
  // isolated, so the count needs the out-degrees too.
  REQUIRE(run_convert("ogb " + data + "tiny_hetero " + (scratch / "hetero") + " -q", scratch).exit_code == 0);
  const nlohmann::json hetero = info_json(scratch / "hetero", scratch);
  bool seen = false;
  for (const nlohmann::json& r : hetero["relations"]) {
    if (r["rel"] != "cites") continue;
    seen = true;
    CHECK(r["in_degree"]["min"] == 0);
    CHECK(r["in_degree"]["isolated"] == 0);
  }
  CHECK(seen);
}

TEST_CASE("halo-convert refuses bad input with one line on stderr and leaves no output", "[tools]") {
  ScratchDir scratch;
  SECTION("a source folder without raw/") {
    fs::create_directories(scratch / "empty");
    const Result r = run_convert("ogb " + (scratch / "empty") + " " + (scratch / "out"), scratch);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("halo-convert: error: ") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(scratch / "out"));
  }
  SECTION("an existing destination without --force") {
    fs::create_directories(scratch / "out");
    std::ofstream(scratch / "out/keep.txt") << "precious";
    const Result r = run_convert("synth sbm " + (scratch / "out") + " --nodes 100", scratch);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("--force") != std::string::npos);
    CHECK(fs::exists(scratch / "out/keep.txt"));
  }
  SECTION("an existing destination is refused before the source is read") {
    fs::copy(halo::test::source_dir() + "/tests/data/ogb/tiny", scratch / "tiny", fs::copy_options::recursive);
    std::ofstream(scratch / "tiny/raw/edge.csv.gz", std::ios::trunc) << "not gzip";
    const Result unread = run_convert("ogb " + (scratch / "tiny") + " " + (scratch / "fresh"), scratch);
    CHECK(unread.exit_code != 0);
    CHECK(unread.err.find("edge.csv.gz") != std::string::npos);  // the source is read when the destination is new
    fs::create_directories(scratch / "out");
    const Result r = run_convert("ogb " + (scratch / "tiny") + " " + (scratch / "out"), scratch);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("exists (use --force") != std::string::npos);
    CHECK(r.err.find("edge.csv.gz") == std::string::npos);
  }
  SECTION("a dataset directory with a truncated array") {
    REQUIRE(run_convert("synth sbm " + (scratch / "ds") + " --nodes 500 -q", scratch).exit_code == 0);
    fs::resize_file(scratch / "ds/node_feat.npy", fs::file_size(scratch / "ds/node_feat.npy") - 4);
    const Result r = run_convert("info " + (scratch / "ds"), scratch);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("node_feat.npy") != std::string::npos);
  }
  SECTION("a negative class count") {
    const Result r = run_convert("ogb " + halo::test::source_dir() + "/tests/data/ogb/tiny " + (scratch / "out") +
                                     " --num-classes -3", scratch);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--num-classes") != std::string::npos);
    CHECK_FALSE(fs::exists(scratch / "out"));
  }
  SECTION("an unknown subcommand") {
    const Result r = run_convert("frobnicate", scratch);
    CHECK(r.exit_code != 0);
  }
}
