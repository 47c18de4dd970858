// Runs one of halo's built programs the way a user does and captures what it printed, for the
// end-to-end tests of the programs.
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/test_paths.hpp"

namespace halo::test {

struct ProgramResult {
  int exit_code;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `prefix` build/bin/PROGRAM `args` (through the shell), capturing stdout and stderr in
// files of `scratch`.
inline ProgramResult run_program(const std::string& program, const std::string& args, const ScratchDir& scratch,
                                 const std::string& prefix = "") {
  const std::string out = scratch / "stdout.txt";
  const std::string err = scratch / "stderr.txt";
  const std::string command =
      prefix + binary_dir() + "/bin/" + program + " " + args + " >" + out + " 2>" + err;
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

// A failure: non-zero exit, nothing on stdout, exactly one line on stderr that starts with
// "PROGRAM: error: " and holds every needle.
inline void check_one_line_error(const ProgramResult& r, const std::string& program,
                                 std::initializer_list<std::string> needles) {
  INFO(r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind(program + ": error: ", 0) == 0);
  for (const std::string& needle : needles) CHECK(r.err.find(needle) != std::string::npos);
}

}  // namespace halo::test
