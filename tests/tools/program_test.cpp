// Tests of tools/common/program.*: the one error format and exit codes of every program. Errors
// print as one line without the library's function names; a bad command line is
// "PROGRAM: error: ... (see --help)" with exit code 2, a failed run exit code 1, --help 0.
#include "tools/common/program.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "tests/support/test_paths.hpp"
#include "tests/tools/run_program.hpp"

using halo::test::run_program;
using halo::test::ScratchDir;
using halo::tools::user_message;

TEST_CASE("user_message drops the library function's name and joins lines", "[tools]") {
  CHECK(user_message("read_ogb: the metadata names no split") == "the metadata names no split");
  CHECK(user_message("HeteroModel: bad inputs") == "bad inputs");
  CHECK(user_message("dist::train: no peer") == "no peer");
  // Plain words, dataset names, paths and ranks stay.
  CHECK(user_message("acm: no vertex type 'x'") == "acm: no vertex type 'x'");
  CHECK(user_message("train: refused") == "train: refused");
  CHECK(user_message("/data/x/dataset.json: cannot open") == "/data/x/dataset.json: cannot open");
  CHECK(user_message("rank 1 of 2: read_part: bad") == "rank 1 of 2: read_part: bad");
  CHECK(user_message("ogbn-arxiv: 3 classes") == "ogbn-arxiv: 3 classes");
  CHECK(user_message("first line\nsecond line\n") == "first line; second line");
}

TEST_CASE("every program answers a bad command line with one line and exit code 2, a failure with 1", "[tools]") {
  ScratchDir scratch;
  // Each program with a command line that is whole but for one flag it does not know.
  const std::pair<const char*, std::string> commands[] = {
      {"halo-convert", "synth sbm " + (scratch / "out")},
      {"halo-partition", scratch.path() + " --parts 2 -o " + (scratch / "out")},
      {"halo-train", "--dataset " + scratch.path()},
      {"halo-bench", "inflate " + halo::test::source_dir() + "/README.md"}};
  for (const auto& [program, args] : commands) {
    INFO(program);
    const auto bad_flag = run_program(program, args + " --no-such-flag", scratch);
    CHECK(bad_flag.exit_code == halo::tools::exit_usage);
    halo::test::check_one_line_error(bad_flag, program, {"--no-such-flag", "(see --help)"});
    const auto help = run_program(program, "--help", scratch);
    CHECK(help.exit_code == 0);
    CHECK(help.out.find(program) != std::string::npos);
  }
  const auto missing = run_program("halo-convert", "info " + (scratch / "nope"), scratch);
  CHECK(missing.exit_code == halo::tools::exit_usage);  // the argument's check: not an existing folder
  const auto failed = run_program("halo-train", "--dataset " + (scratch / "nope"), scratch);
  CHECK(failed.exit_code == halo::tools::exit_failure);
  halo::test::check_one_line_error(failed, "halo-train", {"nope"});
}
