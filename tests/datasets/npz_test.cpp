// Tests of datasets/npz.* and the zip container under it (detail/zip_directory.*,
// detail/zip_member_reader.*): numpy's own archives (deflated and stored) read value for value,
// halo's archives read back bit for bit at every level and size, ZIP64 end records, and every
// class of damage a clear error naming the archive and the member.
#include "datasets/npz.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "tests/support/corrupt_files.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/thread_count.hpp"

using namespace halo;
using namespace halo::datasets;
using Catch::Matchers::Contains;

namespace {

std::string fixture(const std::string& name) { return test::test_data_dir() + "/npz/" + name; }

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::uint32_t u32_at(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, bytes.data() + at, 4);
  return v;
}

void put_u16(std::string& bytes, std::size_t at, std::uint16_t v) { std::memcpy(&bytes[at], &v, 2); }

// Random bits of every kind (NaN patterns included): a round trip must keep them all.
Array<float> random_floats(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  Array<float> x = Array<float>::matrix(rows, cols);
  RandomStream rs(seed, 0);
  for (float& v : x) {
    const std::uint32_t bits = rs.next_u32();
    std::memcpy(&v, &bits, sizeof v);
  }
  return x;
}

Array<std::int64_t> counting(std::int64_t n, std::int64_t start) {
  Array<std::int64_t> a = Array<std::int64_t>::vector(n);
  for (std::int64_t i = 0; i < n; ++i) a[i] = start + i;
  return a;
}

// Where each member's local header, central entry and data lie, from the end record of a small
// archive that halo wrote (no comment, no ZIP64).
struct Layout {
  std::size_t central = 0;  // first central entry
  std::size_t local = 0;    // first local header
  std::size_t data = 0;     // first member's data
};
Layout layout_of(const std::string& bytes) {
  Layout l;
  const std::size_t end = bytes.size() - 22;
  REQUIRE(u32_at(bytes, end) == 0x06054b50);
  l.central = u32_at(bytes, end + 16);
  l.local = u32_at(bytes, l.central + 42);
  std::uint16_t name = 0, extra = 0;
  std::memcpy(&name, bytes.data() + l.local + 26, 2);
  std::memcpy(&extra, bytes.data() + l.local + 28, 2);
  l.data = l.local + 30 + name + extra;
  return l;
}

// An archive of one member "x" (a counting int64 array of n values) at `level`.
std::string one_member_archive(const test::ScratchDir& tmp, int level, std::int64_t n = 1000) {
  const std::string path = tmp / ("one-" + std::to_string(level) + ".npz");
  write_npz(path, level, [&](NpzWriter& npz) { npz.add("x", counting(n, 5)); });
  return path;
}

// What reading every array of `path` throws (nothing = "").
std::string read_error(const std::string& path) {
  try {
    const NpzReader npz(path);
    for (const std::string& key : npz.keys()) npz.read<std::int64_t>(key);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("NpzReader reads numpy's savez_compressed and savez archives value for value", "[npz]") {
  for (const char* name : {"numpy_compressed.npz", "numpy_stored.npz"}) {
    INFO(name);
    const NpzReader npz(fixture(name));
    CHECK(npz.keys() == std::vector<std::string>{"f4", "f8", "i8", "i4", "b1"});
    const Array<float> f4 = npz.read<float>("f4", 5, 3);
    for (std::int64_t i = 0; i < 5; ++i)
      for (std::int64_t j = 0; j < 3; ++j) CHECK(f4[i * 3 + j] == 0.5f + i / 4.0f - j / 8.0f);
    const Array<double> f8 = npz.read<double>("f8", 7);
    for (std::int64_t k = 0; k < 7; ++k) CHECK(f8[k] == Approx(-1.0 + k / 3.0).margin(1e-15));
    CHECK(npz.read<std::int64_t>("i8").to_vector() == counting(12, -3).to_vector());
    const Array<std::int32_t> i4 = npz.read<std::int32_t>("i4", 3, 4);
    for (std::int32_t k = 0; k < 12; ++k) CHECK(i4[k] == k);
    CHECK(npz.read<bool>("b1").to_vector() == std::vector<bool>{true, false, true});
    CHECK(npz.header("i4").shape == std::vector<std::int64_t>{3, 4});
  }
}

TEST_CASE("NpzWriter archives read back bit for bit at every level and size", "[npz]") {
  test::ScratchDir tmp;
  // 6 MB of features: two deflate blocks of the parallel writer.
  const Array<float> big = random_floats(12289, 128, 7);
  const Array<double> small = Array<double>::from_vector({0.25, -1e300, 3.5});
  const Array<std::uint8_t> empty = Array<std::uint8_t>::vector(0);
  for (int level : {0, 1, 6, 9}) {
    INFO("level " << level);
    const std::string path = tmp / ("a" + std::to_string(level) + ".npz");
    write_npz(path, level, [&](NpzWriter& npz) {
      npz.add("big", big);
      npz.add("small", small);
      npz.add("empty", empty);
      npz.add("ids", counting(100, -50));
    });
    const NpzReader npz(path);
    CHECK(npz.keys() == std::vector<std::string>{"big", "small", "empty", "ids"});
    const Array<float> back = npz.read<float>("big", 12289, 128);
    CHECK(std::memcmp(back.data(), big.data(), big.bytes()) == 0);
    CHECK(npz.read<double>("small").to_vector() == small.to_vector());
    CHECK(npz.read<std::uint8_t>("empty").size() == 0);
    CHECK(npz.read<std::int64_t>("ids").to_vector() == counting(100, -50).to_vector());
    if (level > 0) CHECK(npz.stored_bytes("ids") < 800);
  }
}

TEST_CASE("NpzWriter writes the same bytes on any thread count", "[npz]") {
  test::ScratchDir tmp;
  const Array<float> x = random_floats(20000, 100, 3);  // 8 MB: three blocks
  for (int threads : {1, 2})
    test::with_threads(threads, [&] {
      write_npz(tmp / ("t" + std::to_string(threads) + ".npz"), 1, [&](NpzWriter& npz) { npz.add("x", x); });
    });
  CHECK(file_bytes(tmp / "t1.npz") == file_bytes(tmp / "t2.npz"));
}

TEST_CASE("NpzReader for_each_chunk hands out every element once in order", "[npz]") {
  test::ScratchDir tmp;
  const std::int64_t n = (std::int64_t{5} << 20) / 8 + 3;  // more than one 4 MiB chunk
  const std::string path = one_member_archive(tmp, 1, n);
  const NpzReader npz(path);
  const NpyHeader h = npz.header("x");
  std::int64_t next = 0, chunks = 0;
  npz.for_each_chunk("x", h, [&](const void* elements, std::int64_t first, std::int64_t count) {
    REQUIRE(first == next);
    const auto* v = static_cast<const std::int64_t*>(elements);
    for (std::int64_t i = 0; i < count; ++i) REQUIRE(v[i] == 5 + first + i);
    next += count;
    ++chunks;
  });
  CHECK(next == n);
  CHECK(chunks == 2);
}

TEST_CASE("An archive of 70000 members uses and passes through the ZIP64 end records", "[npz]") {
  test::ScratchDir tmp;
  const std::string path = tmp / "many.npz";
  const std::int64_t members = 70000;
  write_npz(path, 0, [&](NpzWriter& npz) {
    for (std::int64_t k = 0; k < members; ++k) npz.add("m" + std::to_string(k), counting(1, k));
  });
  const std::string bytes = file_bytes(path);
  CHECK(u32_at(bytes, bytes.size() - 22 - 20) == 0x07064b50);  // the ZIP64 locator
  const NpzReader npz(path);
  REQUIRE(npz.keys().size() == static_cast<std::size_t>(members));
  CHECK(npz.read<std::int64_t>("m69999")[0] == 69999);
  CHECK(npz.read<std::int64_t>("m0")[0] == 0);
}

TEST_CASE("A damaged or foreign archive is a clear error naming it", "[npz]") {
  test::ScratchDir tmp;
  const std::string good = one_member_archive(tmp, 6);
  const std::string bytes = file_bytes(good);
  const Layout l = layout_of(bytes);
  const std::string bad = tmp / "bad.npz";

  SECTION("not a zip file") {
    write_bytes(bad, "node,label\n1,2\n3,4\n5,6\n7,8\n");
    CHECK_THROWS_WITH(NpzReader(bad), Contains("bad.npz") && Contains("no end-of-central-directory record"));
    write_bytes(bad, "PK");
    CHECK_THROWS_WITH(NpzReader(bad), Contains("too short"));
    write_bytes(bad, "");
    CHECK_THROWS_WITH(NpzReader(bad), Contains("empty"));
    CHECK_THROWS_WITH(NpzReader(tmp / "missing.npz"), Contains("missing.npz") && Contains("cannot open"));
  }
  SECTION("truncated anywhere") {
    for (std::size_t keep : {bytes.size() / 3, bytes.size() - 1, l.data + 5}) {
      write_bytes(bad, bytes.substr(0, keep));
      CHECK_THROWS_WITH(NpzReader(bad), Contains("bad.npz") && Contains("no end-of-central-directory record"));
    }
  }
  SECTION("a CRC-32 that does not match the data") {
    std::string b = bytes;
    b[l.central + 16] = static_cast<char>(b[l.central + 16] ^ 1);
    write_bytes(bad, b);
    CHECK_THAT(read_error(bad), Contains("bad.npz: x.npy") && Contains("CRC-32 mismatch"));
  }
  SECTION("a stored member's data changed") {
    const std::string stored = one_member_archive(tmp, 0);
    test::flip_byte(stored, layout_of(file_bytes(stored)).data + 200);
    CHECK_THAT(read_error(stored), Contains("x.npy") && Contains("CRC-32 mismatch"));
  }
  SECTION("deflate data changed or cut") {
    for (std::size_t at : {l.data + 3, l.data + 40, l.data + 90}) {
      std::string b = bytes;
      b[at] = static_cast<char>(b[at] ^ 0x5a);
      write_bytes(bad, b);
      CHECK_THAT(read_error(bad), Contains("bad.npz: x.npy"));
    }
  }
  SECTION("sizes in the directory that disagree with the data") {
    for (std::size_t field : {std::size_t{20}, std::size_t{24}}) {  // compressed size, size
      std::string b = bytes;
      b[l.central + field] = static_cast<char>(b[l.central + field] - 1);
      write_bytes(bad, b);
      CHECK_THAT(read_error(bad), Contains("bad.npz"));
    }
  }
  SECTION("a local header without its signature") {
    std::string b = bytes;
    b[l.local] = 'X';
    write_bytes(bad, b);
    CHECK_THROWS_WITH(NpzReader(bad), Contains("local header of member 'x.npy'") && Contains("signature"));
  }
  SECTION("more members claimed than the directory holds") {
    std::string b = bytes;
    put_u16(b, b.size() - 22 + 8, 9);
    put_u16(b, b.size() - 22 + 10, 9);
    write_bytes(bad, b);
    CHECK_THROWS_WITH(NpzReader(bad), Contains("claims 9 members"));
  }
  SECTION("a compression method other than stored and deflate") {
    std::string b = bytes;
    put_u16(b, l.central + 10, 12);  // bzip2
    put_u16(b, l.local + 8, 12);
    write_bytes(bad, b);
    CHECK_THROWS_AS(NpzReader(bad), UnsupportedError);
    CHECK_THROWS_WITH(NpzReader(bad), Contains("compression method 12"));
  }
  SECTION("an encrypted member") {
    std::string b = bytes;
    b[l.central + 8] = static_cast<char>(b[l.central + 8] | 1);
    write_bytes(bad, b);
    CHECK_THROWS_WITH(NpzReader(bad), Contains("encrypted"));
  }
  SECTION("a member that is not an .npy array") {
    std::string b = bytes;
    b[l.central + 46 + 4] = 'z';  // "x.npy" -> "x.npz"
    b[l.local + 30 + 4] = 'z';
    write_bytes(bad, b);
    CHECK_THROWS_WITH(NpzReader(bad), Contains("'x.npz', which is not an .npy array"));
  }
  SECTION("local header and directory naming different members") {
    std::string b = bytes;
    b[l.local + 30] = 'y';
    write_bytes(bad, b);
    CHECK_THROWS_WITH(NpzReader(bad), Contains("names 'y.npy'"));
  }
  SECTION("a member listed twice") {
    write_npz(bad, 1, [&](NpzWriter& npz) {
      npz.add("x", counting(3, 0));
      npz.add("x", counting(3, 0));
    });
    CHECK_THROWS_WITH(NpzReader(bad), Contains("lists member 'x.npy' twice"));
  }
  SECTION("an array that is missing or of another dtype") {
    const NpzReader npz(good);
    CHECK_THROWS_WITH(npz.read<float>("y"), Contains("has no array 'y' (it holds x)"));
    CHECK_THROWS_WITH(npz.read<float>("x"), Contains("x.npy") && Contains("dtype is <i8 (int64), expected <f4"));
    CHECK_THROWS_WITH(npz.read<std::int64_t>("x", 7), Contains("has shape (1000,), expected 7 rows"));
  }
}

TEST_CASE("A member past 4 GiB is found through its ZIP64 fields and read in full", "[npz][slow]") {
  test::ScratchDir tmp;
  const std::int64_t n = (std::int64_t{1} << 32) + 4099;  // bytes: past 4 GiB, so ZIP64 sizes and offsets
  Array<std::uint8_t> big = Array<std::uint8_t>::vector(n);
  for (std::int64_t i = 0; i < n; ++i)
    big[i] = static_cast<std::uint8_t>((static_cast<std::uint64_t>(i) * 2654435761u) >> 13);
  const std::string path = tmp / "big.npz";
  write_npz(path, 0, [&](NpzWriter& npz) {
    npz.add("big", big);
    npz.add("after", counting(5, 11));  // its local header lies past 4 GiB
  });
  const NpzReader npz(path);
  CHECK(npz.stored_bytes("big") > (std::uint64_t{1} << 32));
  CHECK(npz.read<std::int64_t>("after").to_vector() == counting(5, 11).to_vector());
  std::int64_t mismatches = 0, seen = 0;
  npz.for_each_chunk("big", npz.header("big"), [&](const void* elements, std::int64_t first, std::int64_t count) {
    const auto* v = static_cast<const std::uint8_t*>(elements);
    for (std::int64_t i = 0; i < count; ++i) mismatches += v[i] != big[first + i];
    seen += count;
  });
  CHECK(seen == n);
  CHECK(mismatches == 0);
}
