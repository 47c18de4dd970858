// Tests of halo-train's --device flag end to end: --device cuda trains on the GPU where one is
// usable and otherwise fails in one line naming the device; a GPU the machine does not have fails
// in one line everywhere; a precomputed first aggregation trains on the GPU too (or fails in one
// line naming it where no GPU is usable).
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/test_paths.hpp"
#include "tests/tools/run_program.hpp"

using halo::test::ScratchDir;
using Result = halo::test::ProgramResult;

namespace {

// A 300-vertex, 3-class SBM dataset directory in the scratch directory.
std::string make_dataset(const ScratchDir& scratch) {
  const std::string dir = scratch / "sbm";
  const Result r = halo::test::run_program("halo-convert",
                       "synth sbm " + dir + " --nodes 300 --avg-degree 6 --features 24 --classes 3 --homophily 0.9 -q",
                       scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return dir;
}

void check_one_line_error(const Result& r, std::initializer_list<std::string> needles) {
  halo::test::check_one_line_error(r, "halo-train", needles);
}

}  // namespace

TEST_CASE("halo-train --device cuda trains on the GPU, or fails in one line naming it where none is usable",
          "[tools]") {
  ScratchDir scratch;
  const std::string data = make_dataset(scratch);
  const Result r = halo::test::run_program("halo-train", "--dataset " + data + " --device cuda --epochs 3 -q --json -", scratch);
  if (r.exit_code == 0) {
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["device"] == "cuda:0");
    CHECK(j["runs"][0]["epochs"].size() == 3);
  } else {
    check_one_line_error(r, {"cuda:0"});
  }
}

TEST_CASE("halo-train refuses a GPU the machine does not have in one line", "[tools]") {
  ScratchDir scratch;
  const std::string data = make_dataset(scratch);
  check_one_line_error(halo::test::run_program("halo-train", "--dataset " + data + " --device cuda:64 --epochs 1 -q", scratch),
                       {"cuda:64"});
}

TEST_CASE("halo-train --device cuda --precompute-first-aggregation trains, or fails in one line naming the GPU",
          "[tools]") {
  ScratchDir scratch;
  const std::string data = make_dataset(scratch);
  const Result r = halo::test::run_program(
      "halo-train", "--dataset " + data + " --device cuda --precompute-first-aggregation --input-dropout 0 --epochs 2 -q --json -",
      scratch);
  if (r.exit_code == 0) {
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["device"] == "cuda:0");
    CHECK(j["feature_streaming"]["precomputed_aggregation"] == true);
  } else {
    check_one_line_error(r, {"cuda:0"});
  }
}
