// Tests of the halo-bench program end to end: `inflate`, the decompression floor of the
// conversion benchmark (its counts of text against files of known size, and a broken file).

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/test_paths.hpp"
#include "tests/tools/run_program.hpp"

using halo::test::ScratchDir;

namespace {

// `lines` lines of numbers (not all alike, so the compressed file has some size).
std::string numbered_lines(int lines, int seed) {
  std::string text;
  for (int i = 0; i < lines; ++i) text += std::to_string(i * seed % 9973) + "," + std::to_string(i) + "\n";
  return text;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

// Writes `text` to `path` and gzips it there (the gzip program, as a user would).
void write_gzipped(const std::string& path, const std::string& text) {
  write_file(path, text);
  REQUIRE(std::system(("gzip -6 -f " + path).c_str()) == 0);
}

}  // namespace

TEST_CASE("halo-bench inflate counts the text of every file it decompresses at once", "[tools]") {
  ScratchDir scratch;
  const std::string a = numbered_lines(200'000, 7), b = numbered_lines(3'000, 13);
  write_gzipped(scratch / "a.csv", a);
  write_gzipped(scratch / "b.csv", b);
  const auto r = halo::test::run_program(
      "halo-bench", "inflate " + (scratch / "a.csv.gz") + " " + (scratch / "b.csv.gz") + " -q --json -", scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["benchmark"] == "inflate");
  REQUIRE(j["files"].size() == 2);
  CHECK(j["files"][0]["text_bytes"] == a.size());
  CHECK(j["files"][1]["text_bytes"] == b.size());
  CHECK(j["text_bytes"] == a.size() + b.size());
  CHECK(j["files"][0]["compressed_bytes"].get<double>() < static_cast<double>(a.size()));
  CHECK(j["seconds"].get<double>() >= j["files"][1]["seconds"].get<double>());
}

TEST_CASE("halo-bench inflate fails in one line naming a broken file", "[tools]") {
  ScratchDir scratch;
  write_gzipped(scratch / "good.csv", numbered_lines(1'000, 3));
  write_file(scratch / "bad.csv.gz", "not gzip at all\n");
  const auto r = halo::test::run_program(
      "halo-bench", "inflate " + (scratch / "good.csv.gz") + " " + (scratch / "bad.csv.gz") + " -q", scratch);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("bad.csv.gz") != std::string::npos);
  CHECK(r.err.find("corrupt gzip data") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
