// Tests of datasets/npy.*: numpy's exact bytes read and written, every malformed-file error,
// mapped reads and round trips of every supported dtype.
#include "datasets/npy.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::datasets;

namespace {

std::string fixture(const std::string& name) { return test::test_data_dir() + "/npy/" + name; }

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The header numpy 2.x writes for a 2x3 float32 array, spelled out by hand: the dict, 21 - 1
// spaces of room for the first axis to grow, padding to 128 bytes, a newline.
std::string numpy_header_2x3_f4() {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  std::string h = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict;
  h.append(128 - 1 - h.size(), ' ');
  return h + "\n";
}

}  // namespace

TEST_CASE("read_npy reads a 2x3 float32 file written by numpy and maps it", "[npy]") {
  const Array<float> a = read_npy<float>(fixture("f4_2x3.npy"));
  REQUIRE(a.ndim() == 2);
  REQUIRE(a.rows() == 2);
  REQUIRE(a.cols() == 3);
  CHECK(a.is_mapped());
  CHECK(a.to_vector() == std::vector<float>{0.5f, -1.25f, 2.0f, 3.0f, 4.75f, -6.0f});
  CHECK(reinterpret_cast<std::uintptr_t>(a.data()) % 64 == 0);
}

TEST_CASE("read_npy_header reports dtype, shape, version and data offset", "[npy]") {
  const NpyHeader h = read_npy_header(fixture("f4_2x3.npy"));
  CHECK(h.dtype == DType::float32);
  CHECK(h.shape == std::vector<std::int64_t>{2, 3});
  CHECK_FALSE(h.fortran_order);
  CHECK(h.data_offset == 128);
  CHECK(h.version == 1);
  CHECK(h.data_bytes() == 24);

  const NpyHeader v2 = read_npy_header(fixture("f8_2x2_v2.npy"));
  CHECK(v2.version == 2);
  CHECK(v2.data_offset == 128);
  CHECK(read_npy_header(fixture("i4_3_v3.npy")).version == 3);
  CHECK(read_npy_header(fixture("scalar.npy")).shape.empty());
}

TEST_CASE("read_npy reads every supported dtype and format version", "[npy]") {
  CHECK(read_npy<std::int64_t>(fixture("i8_5.npy")).to_vector() == std::vector<std::int64_t>{1, -2, 3000000000LL, 4, -5});
  const Array<double> d = read_npy<double>(fixture("f8_2x2_v2.npy"));
  CHECK(d.rows() == 2);
  CHECK(d.to_vector() == std::vector<double>{1.5, -2.5, 1e300, -0.0});
  CHECK(std::signbit(d[3]));
  CHECK(read_npy<std::int32_t>(fixture("i4_3_v3.npy")).to_vector() == std::vector<std::int32_t>{7, -8, 2147483647});
  CHECK(read_npy<std::uint8_t>(fixture("u1_4.npy")).to_vector() == std::vector<std::uint8_t>{0, 1, 200, 255});
  const Array<bool> b = read_npy<bool>(fixture("b1_2x2.npy"));
  CHECK(b.ndim() == 2);
  CHECK(b.to_vector() == std::vector<bool>{true, false, false, true});
  const Array<std::int32_t> empty = read_npy<std::int32_t>(fixture("i4_empty_0x3.npy"));
  CHECK(empty.rows() == 0);
  CHECK(empty.cols() == 3);
  CHECK(empty.ndim() == 2);
}

TEST_CASE("read_npy accepts byte-order marks that are unambiguous on a little-endian host", "[npy]") {
  CHECK(read_npy<std::uint8_t>(fixture("u1_little_endian_mark.npy")).to_vector() == std::vector<std::uint8_t>{9, 10});
  CHECK(read_npy<std::int32_t>(fixture("i4_native_mark.npy")).to_vector() == std::vector<std::int32_t>{-1, 1});
  CHECK(read_npy<std::int64_t>(fixture("i8_python2_long.npy")).to_vector() == std::vector<std::int64_t>{10, 20, 30});
  // A 1-D array is laid out the same in Fortran and C order.
  CHECK(read_npy<float>(fixture("f4_1d_fortran.npy")).to_vector() == std::vector<float>{1, 2, 3});
}

TEST_CASE("read_npy copies data whose offset is misaligned for the type instead of mapping it", "[npy]") {
  const NpyHeader h = read_npy_header(fixture("f4_misaligned.npy"));
  REQUIRE(h.data_offset % 4 != 0);
  const Array<float> a = read_npy<float>(fixture("f4_misaligned.npy"));
  CHECK_FALSE(a.is_mapped());
  CHECK(a.to_vector() == std::vector<float>{1.0f, -3.5f});
}

TEST_CASE("read_npy names the file and both dtypes when the dtype differs", "[npy]") {
  const std::string path = fixture("f8_2x2_v2.npy");
  CHECK_THROWS_WITH(read_npy<float>(path), path + ": dtype is <f8 (float64), expected <f4 (float32)");
  CHECK_THROWS_AS(read_npy<std::int32_t>(fixture("i8_5.npy")), IoError);
  CHECK_THROWS_AS(read_npy<std::uint8_t>(fixture("b1_2x2.npy")), IoError);
}

TEST_CASE("read_npy checks a required shape, -1 meaning any", "[npy]") {
  const std::string path = fixture("f4_2x3.npy");
  CHECK(read_npy<float>(path, 2, 3).size() == 6);
  CHECK(read_npy<float>(path, -1, 3).size() == 6);
  CHECK(read_npy<float>(path, 2, -1).size() == 6);
  CHECK_THROWS_WITH(read_npy<float>(path, 2, 4), Catch::Contains("has shape (2, 3), expected 2 rows and 4 columns"));
  CHECK_THROWS_WITH(read_npy<float>(path, 3, -1), Catch::Contains("expected 3 rows and any columns"));
  // A 1-D array has one column.
  CHECK(read_npy<std::int64_t>(fixture("i8_5.npy"), 5, 1).size() == 5);
}

TEST_CASE("read_npy rejects each malformed file with an IoError naming it", "[npy]") {
  struct Case {
    const char* file;
    const char* message;
  };
  const Case cases[] = {
      {"bad_magic.npy", "bad magic"},
      {"too_short.npy", "too short"},
      {"version_4.npy", "unknown .npy format version 4.0"},
      {"version_1_1.npy", "unknown .npy format version 1.1"},
      {"fortran_2x3.npy", "Fortran"},
      {"big_endian.npy", "big-endian"},
      {"complex.npy", "unsupported dtype '<c8'"},
      {"structured.npy", "structured"},
      {"bad_dict.npy", "bad .npy header dict"},
      {"missing_shape.npy", "key 'shape' is missing"},
      {"extra_key.npy", "unexpected key 'x'"},
      {"negative_shape.npy", "non-negative"},
      {"truncated.npy", "is truncated: shape (2, 3) of <f4 needs 24 data bytes after the 128-byte header, the file has 10"},
      {"header_truncated.npy", "is truncated"},
      {"trailing_bytes.npy", "4 bytes beyond the data"},
      {"scalar.npy", "has 0 dimensions"},
      {"f4_2x2x2.npy", "has 3 dimensions (shape (2, 2, 2))"},
  };
  for (const Case& c : cases) {
    INFO(c.file);
    const std::string path = fixture(c.file);
    try {
      if (std::string(c.file) == "scalar.npy") {
        read_npy<double>(path);
      } else {
        read_npy<float>(path);
      }
      FAIL("no error");
    } catch (const IoError& e) {
      CHECK(e.file() == path);
      CHECK_THAT(e.what(), Catch::StartsWith(path + ": ") && Catch::Contains(c.message));
    }
  }
  CHECK_THROWS_AS(read_npy<float>(fixture("no_such_file.npy")), IoError);
}

TEST_CASE("read_npy rejects bool bytes other than 0 and 1", "[npy]") {
  CHECK_THROWS_WITH(read_npy<bool>(fixture("bool_byte_2.npy")), Catch::Contains("bool element 1 is stored as byte 2"));
}

TEST_CASE("encode_npy_header produces numpy's bytes, data 64-byte aligned", "[npy]") {
  CHECK(encode_npy_header(DType::float32, {2, 3}) == numpy_header_2x3_f4());
  for (std::int64_t n : {0LL, 1LL, 7LL, 123456789012LL}) {
    for (DType d : {DType::float64, DType::int32, DType::boolean}) {
      const std::string h = encode_npy_header(d, {n});
      CHECK(h.size() % 64 == 0);
      CHECK(h.back() == '\n');
      CHECK(h.find(std::string("'shape': (") + std::to_string(n) + ",)") != std::string::npos);
    }
  }
}

TEST_CASE("encode_npy_header switches to version 2.0 only when the header outgrows 64 KiB", "[npy]") {
  CHECK(encode_npy_header(DType::int64, std::vector<std::int64_t>(2, 5))[6] == 1);
  // A shape long enough to need a header above 65535 bytes (only reachable with many axes).
  const std::string big = encode_npy_header(DType::int64, std::vector<std::int64_t>(30000, 1));
  CHECK(big[6] == 2);
  CHECK(big.size() % 64 == 0);
  std::uint32_t length = 0;
  std::memcpy(&length, big.data() + 8, 4);
  CHECK(length + 12 == big.size());
}

TEST_CASE("write_npy writes the exact bytes numpy writes", "[npy]") {
  test::ScratchDir dir;
  const Array<float> a = read_npy<float>(fixture("f4_2x3.npy"));
  const WrittenFile w = write_npy(dir / "a.npy", a);
  CHECK(file_bytes(dir / "a.npy") == file_bytes(fixture("f4_2x3.npy")));
  CHECK(w.bytes == 152);
  CHECK(w.path == dir / "a.npy");

  for (const char* name : {"i8_5.npy", "u1_4.npy", "b1_2x2.npy", "i4_empty_0x3.npy"}) {
    INFO(name);
    const std::string out = dir / name;
    const std::string in = fixture(name);
    switch (read_npy_header(in).dtype) {
      case DType::int64: write_npy(out, read_npy<std::int64_t>(in)); break;
      case DType::uint8: write_npy(out, read_npy<std::uint8_t>(in)); break;
      case DType::boolean: write_npy(out, read_npy<bool>(in)); break;
      case DType::int32: write_npy(out, read_npy<std::int32_t>(in)); break;
      default: FAIL("unexpected dtype");
    }
    CHECK(file_bytes(out) == file_bytes(in));
  }
}

TEMPLATE_TEST_CASE("write_npy then read_npy returns every value, 1-D and 2-D", "[npy]", float, double, std::int32_t,
                   std::int64_t, std::uint8_t, bool) {
  test::ScratchDir dir;
  Array<TestType> m = Array<TestType>::matrix(37, 5);
  for (std::int64_t i = 0; i < m.size(); ++i) {
    if constexpr (std::is_same_v<TestType, bool>) {
      m[i] = (i * 7) % 3 == 0;
    } else {
      m[i] = static_cast<TestType>((i * 37 + 11) % 251);
    }
  }
  write_npy(dir / "m.npy", m);
  const Array<TestType> back = read_npy<TestType>(dir / "m.npy", 37, 5);
  CHECK(back.ndim() == 2);
  CHECK(back.is_mapped());
  CHECK(back.to_vector() == m.to_vector());

  // Array<bool>::from_vector cannot take a std::vector<bool> (no data()), so copy by hand.
  Array<TestType> v = Array<TestType>::vector(13);
  for (std::int64_t i = 0; i < v.size(); ++i) v[i] = m[i];
  write_npy(dir / "v.npy", v);
  const Array<TestType> vb = read_npy<TestType>(dir / "v.npy");
  CHECK(vb.ndim() == 1);
  CHECK(vb.to_vector() == v.to_vector());
  CHECK(read_npy_header(dir / "v.npy").data_offset % 64 == 0);
}

TEST_CASE("write_npy keeps NaN, infinities and extreme integers bit for bit", "[npy]") {
  test::ScratchDir dir;
  const auto f = Array<float>::from_vector({std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity(),
                                            std::numeric_limits<float>::denorm_min(), -0.0f});
  write_npy(dir / "f.npy", f);
  const Array<float> fb = read_npy<float>(dir / "f.npy");
  CHECK(std::memcmp(fb.data(), f.data(), f.bytes()) == 0);
  const auto i = Array<std::int64_t>::from_vector({std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()});
  write_npy(dir / "i.npy", i);
  CHECK(read_npy<std::int64_t>(dir / "i.npy").to_vector() == i.to_vector());
}

TEST_CASE("write_npy replaces an existing file and leaves no temporary file behind", "[npy]") {
  test::ScratchDir dir;
  write_npy(dir / "x.npy", Array<std::int32_t>::from_vector({1, 2, 3}));
  write_npy(dir / "x.npy", Array<std::int32_t>::from_vector({4, 5}));
  CHECK(read_npy<std::int32_t>(dir / "x.npy").to_vector() == std::vector<std::int32_t>{4, 5});
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++entries;
  }
  CHECK(entries == 1);
}

TEST_CASE("dtype names, descrs and sizes agree with numpy", "[npy]") {
  CHECK(std::string(npy_descr(dtype_of<float>())) == "<f4");
  CHECK(std::string(npy_descr(dtype_of<double>())) == "<f8");
  CHECK(std::string(npy_descr(dtype_of<std::int32_t>())) == "<i4");
  CHECK(std::string(npy_descr(dtype_of<std::int64_t>())) == "<i8");
  CHECK(std::string(npy_descr(dtype_of<std::uint8_t>())) == "|u1");
  CHECK(std::string(npy_descr(dtype_of<bool>())) == "|b1");
  CHECK(std::string(npy_descr(dtype_of<std::uint16_t>())) == "<u2");
  CHECK(std::string(npy_descr(DType::float16)) == "<f2");
  CHECK(std::string(npy_descr(DType::bfloat16)) == "<u2");  // numpy has no bfloat16: its files hold the bits
  for (DType d : {DType::float32, DType::float64, DType::int32, DType::int64, DType::uint8, DType::boolean,
                  DType::float16, DType::uint16, DType::bfloat16})
    CHECK(dtype_from_string(to_string(d)) == d);
  CHECK(dtype_size(DType::float64) == 8);
  CHECK(dtype_size(DType::bfloat16) == 2);
  CHECK_THROWS_AS(dtype_from_string("float8"), InvalidArgument);
  CHECK(shape_to_string({5}) == "(5,)");
  CHECK(shape_to_string({}) == "()");
}
