// Tests of graph/base/buffer.*: heap and huge page allocation, read-only maps of a file region,
// truncated and missing files, moves and clones.
#include "graph/base/buffer.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/huge_pages.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;

namespace {

// A file of `n` bytes whose byte i is (i * 7 + 3) mod 256.
std::string write_pattern(const halo::test::ScratchDir& dir, std::size_t n) {
  const std::string path = dir / "pattern.bin";
  std::vector<char> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>((i * 7 + 3) % 256);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(n));
  return path;
}

bool holds_pattern(const Buffer& b, std::size_t offset) {
  const auto* p = static_cast<const unsigned char*>(b.data());
  for (std::size_t i = 0; i < b.size(); ++i)
    if (p[i] != ((offset + i) * 7 + 3) % 256) return false;
  return true;
}

}  // namespace

TEST_CASE("Buffer::allocate gives aligned, writable memory of the asked size", "[graph]") {
  Buffer b = Buffer::allocate(1000);
  CHECK(b.size() == 1000);
  CHECK_FALSE(b.is_mapped());
  CHECK(reinterpret_cast<std::uintptr_t>(b.data()) % Buffer::alignment == 0);
  std::memset(b.data(), 0x5a, 1000);
  CHECK(static_cast<const unsigned char*>(std::as_const(b).data())[999] == 0x5a);
  CHECK(Buffer::allocate(0).empty());
}

TEST_CASE("Buffer::allocate serves large blocks from huge-page-aligned pages, writable and movable", "[graph]") {
  const std::size_t bytes = Buffer::huge_page_threshold + 1000;
  Buffer b = Buffer::allocate(bytes);
  CHECK(b.size() == bytes);
  CHECK_FALSE(b.is_mapped());  // pages, not a file map: writable
  auto* p = static_cast<unsigned char*>(b.data());
  const auto address = reinterpret_cast<std::uintptr_t>(p);
#if !defined(__SANITIZE_ADDRESS__)
  CHECK(address % huge_page_bytes == 0);
#endif
  CHECK(address % Buffer::alignment == 0);
  for (std::size_t i = 0; i < bytes; i += 4096) p[i] = static_cast<unsigned char>(i / 4096);
  p[bytes - 1] = 0x77;
  const Buffer copy = b.clone();
  Buffer moved = std::move(b);
  CHECK(b.empty());  // NOLINT(bugprone-use-after-move): checking the moved-from state is the point
  CHECK_FALSE(moved.is_mapped());
  const auto* q = static_cast<const unsigned char*>(copy.data());
  CHECK(std::memcmp(q, std::as_const(moved).data(), bytes) == 0);
  CHECK(q[4096 * 7] == 7);
  CHECK(q[bytes - 1] == 0x77);
  moved = Buffer::allocate(8);  // the pages are given back, the small block comes from the heap
  CHECK(moved.size() == 8);
}

TEST_CASE("Buffer::map_file maps a region of a file read-only", "[graph]") {
  halo::test::ScratchDir dir;
  const std::string path = write_pattern(dir, 10000);
  // An offset that is not a page multiple: the map must still start at the right byte.
  const Buffer b = Buffer::map_file(path, 4097, 3000);
  CHECK(b.is_mapped());
  CHECK(b.size() == 3000);
  CHECK(holds_pattern(b, 4097));
  Buffer writable_view = Buffer::map_file(path, 0, 16);
  CHECK_THROWS_WITH(writable_view.data(), Catch::Contains("read-only file map"));
  CHECK(Buffer::map_file(path, 10000, 0).empty());
}

TEST_CASE("Buffer::map_file refuses truncated and missing files with the sizes", "[graph]") {
  halo::test::ScratchDir dir;
  const std::string path = write_pattern(dir, 100);
  CHECK_THROWS_AS(Buffer::map_file(path, 50, 51), IoError);
  CHECK_THROWS_WITH(Buffer::map_file(path, 50, 51),
                    Catch::Contains("file is truncated: expected at least 101 bytes, found 100"));
  CHECK_THROWS_WITH(Buffer::map_file(path, 200, 0), Catch::Contains("truncated"));
  CHECK_THROWS_WITH(Buffer::map_file(dir / "absent.bin", 0, 1), Catch::Contains("absent.bin: cannot open"));
}

TEST_CASE("Buffer::clone copies a mapped buffer into writable memory", "[graph]") {
  halo::test::ScratchDir dir;
  const std::string path = write_pattern(dir, 5000);
  const Buffer mapped = Buffer::map_file(path, 100, 4000);
  Buffer copy = mapped.clone();
  CHECK_FALSE(copy.is_mapped());
  CHECK(copy.size() == 4000);
  CHECK(holds_pattern(copy, 100));
  static_cast<unsigned char*>(copy.data())[0] ^= 0xff;
  CHECK(holds_pattern(mapped, 100));  // the original is untouched
}

TEST_CASE("Buffer moves hand over ownership and leave the source empty", "[graph]") {
  halo::test::ScratchDir dir;
  const std::string path = write_pattern(dir, 64);
  Buffer a = Buffer::map_file(path, 0, 64);
  Buffer b = std::move(a);
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): checking the moved-from state is the point
  CHECK_FALSE(a.is_mapped());
  CHECK(b.is_mapped());
  CHECK(holds_pattern(b, 0));
  Buffer c = Buffer::allocate(8);
  c = std::move(b);
  CHECK(c.is_mapped());
  CHECK(c.size() == 64);
}
