// Tests of datasets/checksum.*: zlib-compatible CRC-32 against a bit-by-bit reference, across
// chunk boundaries and thread counts, for buffers and files; CRC-32C against its check value and
// the same reference.
#include "datasets/checksum.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "tests/reference/naive_crc.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/thread_count.hpp"

using namespace halo;
using namespace halo::datasets;

namespace {

std::uint32_t naive_crc32(const std::vector<unsigned char>& bytes) {
  return test::naive_crc(bytes.data(), bytes.size(), test::crc32_polynomial);
}

// Deterministic, non-repeating-looking bytes (a 64-bit LCG's high byte).
std::vector<unsigned char> pseudo_random_bytes(std::size_t n) {
  std::vector<unsigned char> v(n);
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (auto& b : v) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    b = static_cast<unsigned char>(x >> 56);
  }
  return v;
}

}  // namespace

TEST_CASE("crc32_of matches the standard check value and zlib's empty-input value", "[checksum]") {
  const std::string check = "123456789";
  CHECK(crc32_of(check.data(), check.size()) == 0xcbf43926u);
  CHECK(buffer_checksum(check.data(), check.size()) == "cbf43926");
  CHECK(crc32_of(nullptr, 0) == 0u);
  CHECK(crc32_hex(0x0000abcdu) == "0000abcd");
}

TEST_CASE("crc32_of over many chunks equals a bit-by-bit CRC for any thread count", "[checksum]") {
  // Two full 4 MiB chunks and a ragged tail.
  const std::vector<unsigned char> bytes = pseudo_random_bytes((std::size_t{9} << 20) + 12345);
  const std::uint32_t expected = naive_crc32(bytes);
  for (int threads : {1, 2, 3}) {
    const halo::test::ThreadCount scope(threads);
    CHECK(crc32_of(bytes.data(), bytes.size()) == expected);
  }
}

TEST_CASE("crc32c_of matches CRC-32C's check value and a bit-by-bit reference", "[checksum]") {
  const std::string check = "123456789";
  CHECK(crc32c_of(check.data(), check.size()) == 0xe3069283u);
  CHECK(crc32c_of(nullptr, 0) == 0u);
  for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{4096} + 3, std::size_t{1} << 20}) {
    const std::vector<unsigned char> bytes = pseudo_random_bytes(n);
    CHECK(crc32c_of(bytes.data(), n) == test::naive_crc(bytes.data(), n, test::crc32c_polynomial));
  }
}

TEST_CASE("crc32_concat combines the CRCs of two pieces into the CRC of both", "[checksum]") {
  const std::vector<unsigned char> bytes = pseudo_random_bytes(1000);
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{499}, std::size_t{1000}}) {
    const std::uint32_t a = crc32_of(bytes.data(), cut);
    const std::uint32_t b = crc32_of(bytes.data() + cut, bytes.size() - cut);
    CHECK(crc32_concat(a, b, bytes.size() - cut) == naive_crc32(bytes));
  }
}

TEST_CASE("file_checksum reads a file through a map and agrees with the buffer checksum", "[checksum]") {
  test::ScratchDir dir;
  const std::vector<unsigned char> bytes = pseudo_random_bytes((std::size_t{4} << 20) + 3);
  {
    std::ofstream out(dir / "data.bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  CHECK(crc32_of_file(dir / "data.bin") == naive_crc32(bytes));
  CHECK(file_checksum(dir / "data.bin") == buffer_checksum(bytes.data(), bytes.size()));
  { std::ofstream empty(dir / "empty.bin", std::ios::binary); }
  CHECK(file_checksum(dir / "empty.bin") == "00000000");
  CHECK_THROWS_AS(file_checksum(dir / "missing.bin"), IoError);
  CHECK_THROWS_WITH(file_checksum(dir.path()), Catch::Contains("not a regular file"));
}
