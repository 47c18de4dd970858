// Tests of datasets/detail/gzip_reader: ISA-L inflate against the text that was compressed, over
// single and concatenated members, members that straddle the 1 MiB input chunks, tiny read sizes,
// optional gzip header fields, and every way a file can be broken (cut short, a flipped bit, a
// trailer CRC-32 or length that does not match, garbage after the last member); files it maps
// and a pipe, which it reads.
#include "datasets/detail/gzip_reader.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include "datasets/detail/csv_gz_writer.hpp"
#include "graph/base/error.hpp"
#include "tests/datasets/ogb_fixture.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::datasets::detail;
using Catch::Contains;
using halo::test::ScratchDir;

namespace {

// CSV-like text that compresses about as well as OGB's files: random numbers, commas, newlines.
std::string random_csv(std::size_t bytes, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::string text;
  text.reserve(bytes + 32);
  while (text.size() < bytes) {
    text += std::to_string(rng() % 100000) + "," + std::to_string(rng() % 1000) + "." + std::to_string(rng() % 97) + "\n";
  }
  return text;
}

// Reads `path` whole through GzipReader, `chunk` bytes per call.
std::string read_all(const std::string& path, std::size_t chunk) {
  GzipReader reader(path);
  std::string text, buffer(chunk, '\0');
  while (const std::size_t n = reader.read(buffer.data(), chunk)) text.append(buffer.data(), n);
  return text;
}

// Bit-at-a-time CRC-32 (RFC 1952), a reference independent of zlib and ISA-L.
std::uint32_t naive_crc32(const std::string& bytes) {
  std::uint32_t crc = 0xffffffffu;
  for (unsigned char byte : bytes) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void put_le32(std::string& out, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out[at + static_cast<std::size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xff);
}

// The error GzipReader raises while reading `path` whole; fails the test when there is none.
IoError read_error(const std::string& path, std::size_t chunk = 1 << 16) {
  try {
    read_all(path, chunk);
  } catch (const IoError& e) {
    return e;
  }
  FAIL("no IoError reading " << path);
  return IoError(path, "unreachable");
}

}  // namespace

TEST_CASE("GzipReader returns the compressed text at any read size", "[datasets]") {
  ScratchDir scratch;
  const std::string text = random_csv(300'000, 1);
  halo::test::write_file(scratch / "one.csv.gz", gzip_member(text, 6));
  for (std::size_t chunk : {1u, 7u, 4096u, 1u << 20}) {
    INFO("chunk " << chunk);
    CHECK(read_all(scratch / "one.csv.gz", chunk) == text);
  }
}

TEST_CASE("GzipReader reads a gzip stream from a pipe, which it cannot map", "[datasets]") {
  ScratchDir scratch;
  // Two members and 3 MB of text: several of the 1 MiB reads the pipe is read in.
  const std::string first = random_csv(2'000'000, 4), second = random_csv(1'000'000, 5);
  const std::string file = gzip_member(first, 1) + gzip_member(second, 6);
  const std::string fifo = scratch / "piped.csv.gz";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] { halo::test::write_file(fifo, file); });
  std::string text;
  try {
    text = read_all(fifo, 1 << 16);
  } catch (...) {
    writer.join();
    throw;
  }
  writer.join();
  CHECK(text == first + second);
}

TEST_CASE("GzipReader reads members of every size, empty ones and ones across input chunks", "[datasets]") {
  ScratchDir scratch;
  // Members from 0 bytes to 3 MB of text at levels 0 (stored blocks), 1 and 9; the big ones
  // make members begin and end inside, and straddle, the reader's 1 MiB input chunks.
  std::string text, file;
  std::uint32_t seed = 10;
  for (std::size_t size : {0u, 1u, 5000u, 0u, 3'000'000u, 17u, 1'500'000u, 0u, 70'000u}) {
    const std::string part = size == 1 ? std::string("\n") : random_csv(size, seed++).substr(0, size);
    text += part;
    file += gzip_member(part, static_cast<int>(seed % 3 == 0 ? 0 : seed % 3 == 1 ? 1 : 9));
  }
  halo::test::write_file(scratch / "many.csv.gz", file);
  CHECK(read_all(scratch / "many.csv.gz", 1 << 22) == text);
  CHECK(read_all(scratch / "many.csv.gz", 65'537) == text);
}

TEST_CASE("GzipReader reads a trailer or header that the 1 MiB input chunk boundary splits", "[datasets]") {
  ScratchDir scratch;
  const std::string second = random_csv(10'000, 20);
  // Stored (level 0) members grow with their text byte for byte between block boundaries, so a
  // first member can be sized to end at any offset around the reader's 1 MiB input chunk.
  for (int delta : {-12, -8, -7, -4, -1, 0, 1, 3, 9}) {
    const std::size_t target = (std::size_t{1} << 20) + static_cast<std::size_t>(static_cast<long>(delta));
    std::string first;
    std::string member;
    const std::string text = random_csv(target, 21);
    long length = static_cast<long>(target) - 200;
    for (int attempt = 0; attempt < 20 && member.size() != target; ++attempt) {
      first = text.substr(0, static_cast<std::size_t>(length));
      member = gzip_member(first, 0);
      length += static_cast<long>(target) - static_cast<long>(member.size());
    }
    INFO("first member ends " << delta << " bytes from the chunk boundary");
    REQUIRE(member.size() == target);
    halo::test::write_file(scratch / "split.csv.gz", member + gzip_member(second, 6));
    CHECK(read_all(scratch / "split.csv.gz", 1 << 22) == first + second);
  }
}

TEST_CASE("GzipReader accepts gzip headers with extra field, name, comment and header CRC", "[datasets]") {
  ScratchDir scratch;
  const std::string text = random_csv(20'000, 2);
  const std::string member = gzip_member(text, 6);
  // gzip_member writes a bare 10-byte header; rebuild one with FEXTRA, FNAME, FCOMMENT and FHCRC.
  std::string header = member.substr(0, 10);
  header[3] = static_cast<char>(0x04 | 0x08 | 0x10 | 0x02);
  header += std::string("\x03\x00", 2) + "abc";
  header += std::string("edge.csv") + '\0' + "made by hand" + '\0';
  const std::uint32_t hcrc = naive_crc32(header);
  header += static_cast<char>(hcrc & 0xff);
  header += static_cast<char>((hcrc >> 8) & 0xff);
  const std::string body = member.substr(10);
  halo::test::write_file(scratch / "named.csv.gz", header + body);
  CHECK(read_all(scratch / "named.csv.gz", 1 << 16) == text);

  header[header.size() - 1] ^= 0x01;
  halo::test::write_file(scratch / "bad_hcrc.csv.gz", header + body);
  CHECK_THAT(read_error(scratch / "bad_hcrc.csv.gz").what(), Contains("header CRC"));
}

TEST_CASE("GzipReader checks the CRC-32 and the length in each member's trailer", "[datasets]") {
  ScratchDir scratch;
  const std::string first = random_csv(50'000, 3), second = random_csv(40'000, 4);
  const std::string good_first = gzip_member(first, 6), good_second = gzip_member(second, 6);
  // The trailer is the member's last 8 bytes: CRC-32 then length, little-endian.
  const std::size_t trailer = good_second.size() - 8;
  REQUIRE(static_cast<unsigned char>(good_second[trailer]) == (naive_crc32(second) & 0xff));

  std::string bad_crc = good_second;
  put_le32(bad_crc, trailer, naive_crc32(second) ^ 0x00010000u);
  halo::test::write_file(scratch / "crc.csv.gz", good_first + bad_crc);
  IoError e = read_error(scratch / "crc.csv.gz");
  CHECK(e.file() == scratch / "crc.csv.gz");
  CHECK_THAT(e.what(), Contains("gzip member 2") && Contains("trailer does not match") &&
                           Contains(std::to_string(second.size()) + " bytes"));

  std::string bad_length = good_second;
  put_le32(bad_length, trailer + 4, static_cast<std::uint32_t>(second.size() + 1));
  halo::test::write_file(scratch / "length.csv.gz", good_first + bad_length);
  CHECK_THAT(read_error(scratch / "length.csv.gz").what(), Contains("trailer does not match"));

  // The text of the good first member comes out before the error.
  GzipReader reader(scratch / "length.csv.gz");
  std::string buffer(first.size(), '\0');
  std::size_t got = 0;
  while (got < first.size()) got += reader.read(buffer.data() + got, first.size() - got);
  CHECK(buffer == first);
}

TEST_CASE("GzipReader reports a file cut anywhere, and never returns text that was not there", "[datasets]") {
  ScratchDir scratch;
  const std::string text = random_csv(2'000, 5);
  const std::string file = gzip_member(text, 6) + gzip_member(text, 1);
  const std::string path = scratch / "cut.csv.gz";
  for (std::size_t cut = 1; cut < file.size(); ++cut) {
    if (cut == gzip_member(text, 6).size()) continue;  // a clean end between the two members
    INFO("cut at byte " << cut << " of " << file.size());
    std::filesystem::remove(path);  // not truncated in place: ext4 would flush it to disk each time
    halo::test::write_file(path, file.substr(0, cut));
    GzipReader reader(path);
    std::string got, buffer(512, '\0');
    bool failed = false;
    try {
      while (const std::size_t n = reader.read(buffer.data(), buffer.size())) got.append(buffer.data(), n);
    } catch (const IoError& e) {
      failed = true;
      CHECK(e.file() == path);
    }
    CHECK(failed);
    CHECK((text + text).compare(0, got.size(), got) == 0);
  }
}

TEST_CASE("GzipReader reports a flipped bit as corrupt data or a trailer mismatch", "[datasets]") {
  ScratchDir scratch;
  const std::string text = random_csv(30'000, 6);
  const std::string member = gzip_member(text, 6);
  std::mt19937 rng(9);
  for (int trial = 0; trial < 200; ++trial) {
    std::string broken = member;
    const std::size_t at = 10 + rng() % (member.size() - 10);
    broken[at] = static_cast<char>(broken[at] ^ (1 << (rng() % 8)));
    std::filesystem::remove(scratch / "flip.csv.gz");
    halo::test::write_file(scratch / "flip.csv.gz", broken);
    INFO("bit flipped in byte " << at);
    const std::string what = read_error(scratch / "flip.csv.gz").what();
    CHECK((what.find("gzip") != std::string::npos || what.find("truncated") != std::string::npos));
  }
}

TEST_CASE("GzipReader refuses an empty .gz file and garbage after the last member", "[datasets]") {
  ScratchDir scratch;
  halo::test::write_file(scratch / "empty.csv.gz", "");
  CHECK_THAT(read_error(scratch / "empty.csv.gz").what(), Contains("empty file"));
  halo::test::write_file(scratch / "tail.csv.gz", gzip_member("1,2\n", 6) + "1,3\n2,3\n0,1\n5,6\n");
  CHECK_THAT(read_error(scratch / "tail.csv.gz").what(), Contains("gzip member 2 does not start with a gzip header"));
  halo::test::write_file(scratch / "plain.csv.gz", "0,1\n1,2\n2,3\n");
  CHECK_THAT(read_error(scratch / "plain.csv.gz").what(), Contains("corrupt gzip data"));
}

TEST_CASE("GzipReader passes a plain file through unchanged", "[datasets]") {
  ScratchDir scratch;
  const std::string text = random_csv(100'000, 7);
  halo::test::write_file(scratch / "plain.csv", text);
  CHECK(read_all(scratch / "plain.csv", 999) == text);
  CHECK_FALSE(GzipReader(scratch / "plain.csv").is_gzip());
}
