// Tests of graph/base/huge_pages.*: blocks start on a huge page boundary, are zero, writable over
// their whole length, and can be given back in parts.
#include "graph/base/huge_pages.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>

using namespace halo;

namespace {

bool all_zero(const unsigned char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

}  // namespace

TEST_CASE("map_huge_pages gives zeroed, writable blocks on a huge page boundary", "[graph]") {
  // Lengths below one huge page, of exactly one, and spanning several with a ragged end.
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{5000}, huge_page_bytes, 3 * huge_page_bytes + 12345}) {
    CAPTURE(bytes);
    auto* p = static_cast<unsigned char*>(map_huge_pages(bytes));
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % huge_page_bytes == 0);
    const std::size_t length = round_to_pages(bytes);
    CHECK(length >= bytes);
    CHECK(all_zero(p, length));
    std::memset(p, 0xa5, length);  // every page of the block is there to write
    CHECK(p[length - 1] == 0xa5);
    unmap_pages(p, length);
  }
  CHECK(map_huge_pages(0) == nullptr);
}

TEST_CASE("unmap_pages gives back a page-aligned part of a block and leaves the rest", "[graph]") {
  const std::size_t length = round_to_pages(2 * huge_page_bytes);
  auto* p = static_cast<unsigned char*>(map_huge_pages(length));
  REQUIRE(p != nullptr);
  std::memset(p, 0x3c, length);
  unmap_pages(p + huge_page_bytes, length - huge_page_bytes);
  CHECK(p[0] == 0x3c);
  CHECK(p[huge_page_bytes - 1] == 0x3c);
  unmap_pages(p, huge_page_bytes);
}
