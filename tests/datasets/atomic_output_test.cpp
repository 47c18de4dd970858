// Tests of datasets/atomic_output.*: files and directories appear whole or not at all, an
// existing destination is refused or replaced as asked, and what a killed writer left behind is
// cleaned up (or put back) by the next one.
#include "datasets/atomic_output.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/checksum.hpp"
#include "graph/base/error.hpp"
#include "tests/support/abandoned_temporaries.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::datasets;
namespace fs = std::filesystem;

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("write_file_atomically writes the bytes and reports their size and CRC-32", "[atomic_output]") {
  test::ScratchDir dir;
  const WrittenFile w = write_file_atomically(dir / "a.txt", std::string_view("hello, halo"));
  CHECK(file_bytes(dir / "a.txt") == "hello, halo");
  CHECK(w.bytes == 11);
  CHECK(w.crc32 == crc32_of_file(dir / "a.txt"));
  CHECK(entries(dir.path()) == std::vector<std::string>{"a.txt"});
}

TEST_CASE("write_file_atomically computes the CRC-32 of many pieces as of one file", "[atomic_output]") {
  test::ScratchDir dir;
  const WrittenFile w = write_file_atomically(dir / "b.bin", [](FileWriter& out) {
    for (int i = 0; i < 100; ++i) out.write(std::string(static_cast<std::size_t>(i), static_cast<char>('a' + i % 26)));
    CHECK(out.bytes_written() == 4950);
  });
  CHECK(w.bytes == 4950);
  CHECK(crc32_hex(w.crc32) == file_checksum(dir / "b.bin"));
}

TEST_CASE("write_file_atomically keeps the old file and leaves no temporary when the writer throws", "[atomic_output]") {
  test::ScratchDir dir;
  write_file_atomically(dir / "c.txt", std::string_view("old"));
  CHECK_THROWS_WITH(write_file_atomically(dir / "c.txt",
                                          [](FileWriter& out) {
                                            out.write(std::string_view("new, half"));
                                            throw std::runtime_error("writer failed");
                                          }),
                    "writer failed");
  CHECK(file_bytes(dir / "c.txt") == "old");
  CHECK(entries(dir.path()) == std::vector<std::string>{"c.txt"});
}

TEST_CASE("write_file_atomically names the file when its folder does not exist", "[atomic_output]") {
  test::ScratchDir dir;
  CHECK_THROWS_WITH(write_file_atomically(dir / "no/such/d.txt", std::string_view("x")),
                    Catch::StartsWith(dir / "no/such/d.txt"));
}

TEST_CASE("AtomicDirectory appears at its destination only on commit", "[atomic_output]") {
  test::ScratchDir dir;
  const std::string dst = dir / "out/data";  // the parent "out" is created on demand
  {
    AtomicDirectory out(dst, false);
    CHECK(fs::is_directory(out.path()));
    CHECK(out.path().rfind(dst + ".tmp-", 0) == 0);
    CHECK_FALSE(fs::exists(dst));
    const WrittenFile w = out.write_file("sub/deeper/f.txt", [](FileWriter& f) { f.write(std::string_view("inside")); });
    CHECK(w.path == out.path() + "/sub/deeper/f.txt");
    CHECK(w.bytes == 6);
    // Files written by other means are synced by commit().
    std::ofstream(out.path() + "/plain.txt") << "plain";
    out.commit();
    CHECK(out.committed());
    CHECK_THROWS_AS(out.commit(), InvalidArgument);
  }
  CHECK(file_bytes(dst + "/sub/deeper/f.txt") == "inside");
  CHECK(file_bytes(dst + "/plain.txt") == "plain");
  CHECK(entries(dst + "/sub/deeper") == std::vector<std::string>{"f.txt"});
  CHECK(entries(dir / "out") == std::vector<std::string>{"data"});
}

TEST_CASE("AtomicDirectory removes its temporary directory when not committed", "[atomic_output]") {
  test::ScratchDir dir;
  const std::string dst = dir / "data";
  try {
    AtomicDirectory out(dst, false);
    write_file_atomically(out.path() + "/f.txt", std::string_view("partial"));
    throw std::runtime_error("conversion failed");
  } catch (const std::runtime_error&) {
  }
  CHECK(entries(dir.path()).empty());
}

TEST_CASE("AtomicDirectory refuses an existing destination without force, before any work", "[atomic_output]") {
  test::ScratchDir dir;
  const std::string dst = dir / "data";
  fs::create_directories(dst);
  write_file_atomically(dst + "/keep.txt", std::string_view("keep"));
  CHECK_THROWS_WITH(AtomicDirectory(dst, false), dst + ": exists (use --force to replace it)");
  CHECK_THROWS_WITH(AtomicDirectory(dst + "/", false), Catch::Contains("use --force"));
  CHECK(entries(dir.path()) == std::vector<std::string>{"data"});
  CHECK(file_bytes(dst + "/keep.txt") == "keep");
}

TEST_CASE("AtomicDirectory with force replaces the destination and removes the old one", "[atomic_output]") {
  test::ScratchDir dir;
  const std::string dst = dir / "data";
  fs::create_directories(dst);
  write_file_atomically(dst + "/old.txt", std::string_view("old"));
  {
    AtomicDirectory out(dst, true);
    CHECK(fs::exists(dst + "/old.txt"));  // untouched until commit
    write_file_atomically(out.path() + "/new.txt", std::string_view("new"));
    out.commit();
  }
  CHECK(entries(dst) == std::vector<std::string>{"new.txt"});
  CHECK(entries(dir.path()) == std::vector<std::string>{"data"});
}

TEST_CASE("AtomicDirectory with force keeps the old destination when it is not committed", "[atomic_output]") {
  test::ScratchDir dir;
  const std::string dst = dir / "data";
  fs::create_directories(dst);
  write_file_atomically(dst + "/old.txt", std::string_view("old"));
  { AtomicDirectory out(dst, true); }
  CHECK(entries(dst) == std::vector<std::string>{"old.txt"});
  CHECK(entries(dir.path()) == std::vector<std::string>{"data"});
}

TEST_CASE("AtomicDirectory refuses at commit a destination created meanwhile, without force", "[atomic_output]") {
  test::ScratchDir dir;
  const std::string dst = dir / "data";
  AtomicDirectory out(dst, false);
  write_file_atomically(out.path() + "/mine.txt", std::string_view("mine"));
  fs::create_directories(dst);  // empty: a plain rename(2) would silently replace it
  CHECK_THROWS_WITH(out.commit(), Catch::Contains("use --force"));
  CHECK_FALSE(out.committed());
  CHECK(entries(dst).empty());
}

TEST_CASE("recover_interrupted_output removes the temporaries of ended writers and only theirs", "[atomic_output]") {
  test::ScratchDir dir;
  const std::string dst = dir / "data";
  fs::create_directories(dst);
  const std::string ended = test::temporary_name(dst, "tmp", test::ended_process_id());
  const std::string running = test::temporary_name(dst, "tmp", static_cast<int>(::getppid()));
  const std::string elsewhere = test::temporary_name(dst, "tmp", test::ended_process_id(), "another-host");
  const std::string other_output = test::temporary_name(dir / "other", "tmp", test::ended_process_id());
  for (const std::string& t : {ended, running, elsewhere, other_output}) fs::create_directories(t + "/graph");
  const std::string ended_file = test::temporary_name(dir / "summary.json", "tmp", test::ended_process_id());
  write_file_atomically(ended_file, std::string_view("half"));

  recover_interrupted_output(dst);
  CHECK_FALSE(fs::exists(ended));
  CHECK(fs::exists(running));
  CHECK(fs::exists(elsewhere));
  CHECK(fs::exists(other_output));
  // write_file_atomically cleans beside the file it writes.
  write_file_atomically(dir / "summary.json", std::string_view("{}"));
  CHECK_FALSE(fs::exists(ended_file));
  CHECK(file_bytes(dir / "summary.json") == "{}");
}

TEST_CASE("recover_interrupted_output puts back the old copy of a replacement that was interrupted", "[atomic_output]") {
  test::ScratchDir dir;
  const std::string dst = dir / "data";
  // A --force replacement killed between its two renames: the old copy moved aside, the new one
  // still under its temporary name.
  const std::string aside = test::temporary_name(dst, "old", test::ended_process_id());
  const std::string partial = test::temporary_name(dst, "tmp", test::ended_process_id());
  fs::create_directories(aside);
  write_file_atomically(aside + "/old.txt", std::string_view("old"));
  fs::create_directories(partial);
  recover_interrupted_output(dst);
  CHECK(file_bytes(dst + "/old.txt") == "old");
  CHECK(entries(dir.path()) == std::vector<std::string>{"data"});

  SECTION("an old copy beside a destination that exists is removed") {
    fs::create_directories(aside);
    recover_interrupted_output(dst);
    CHECK(entries(dir.path()) == std::vector<std::string>{"data"});
  }
  SECTION("AtomicDirectory recovers before it refuses an existing destination") {
    fs::remove_all(dst);
    fs::create_directories(aside);
    write_file_atomically(aside + "/old.txt", std::string_view("old"));
    CHECK_THROWS_WITH(AtomicDirectory(dst, false), Catch::Contains("exists"));
    CHECK(file_bytes(dst + "/old.txt") == "old");
  }
}

TEST_CASE("check_new_destination refuses what writing would refuse, before any work", "[atomic_output]") {
  test::ScratchDir dir;
  const std::string dst = dir / "data";
  CHECK_NOTHROW(check_new_destination(dst, false));
  CHECK_NOTHROW(check_new_destination(dir / "a/b/c", false));  // missing folders are created later
  fs::create_directories(dst);
  CHECK_THROWS_WITH(check_new_destination(dst, false), Catch::Contains(dst) && Catch::Contains("use --force"));
  CHECK_NOTHROW(check_new_destination(dst + "/", true));
  write_file_atomically(dir / "file", std::string_view("x"));
  CHECK_THROWS_WITH(check_new_destination(dir / "file/sub", false), Catch::Contains("is not a folder"));
  CHECK(fs::exists(dst));  // nothing was touched
}
