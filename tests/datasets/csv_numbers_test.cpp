// Tests of datasets/detail/{csv_numbers, line_blocks, gzip_reader, parse_number}: the number
// fast paths against std::from_chars, line counting and numbering across blocks, concatenated
// gzip members, and a first error that does not depend on the thread count.
#include "datasets/detail/csv_numbers.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <charconv>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "datasets/detail/csv_gz_writer.hpp"
#include "datasets/detail/gzip_reader.hpp"
#include "datasets/detail/line_blocks.hpp"
#include "datasets/detail/parse_number.hpp"
#include "graph/base/error.hpp"
#include "tests/datasets/ogb_fixture.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/thread_count.hpp"

using namespace halo;
using namespace halo::datasets::detail;
using Catch::Contains;
using halo::test::ScratchDir;

TEST_CASE("parse_float returns what std::from_chars returns, bit for bit", "[datasets]") {
  std::mt19937_64 rng(7);
  std::vector<std::string> samples = {"0", "-0", "1", "0.5", "-1.25", "1e-3", "16777216", "16777217", "0.1",
                                      "3.4028235e38", "1.17549435e-38", "0.000001", "123456.789", "-7.", ".5",
                                      "99999999999999999999", "0.33333333333333333333", "inf", "nan"};
  for (int i = 0; i < 20000; ++i) {
    char buf[64];
    const double x = std::uniform_real_distribution<double>(-1, 1)(rng) * std::pow(10.0, static_cast<int>(rng() % 12) - 4);
    std::snprintf(buf, sizeof buf, i % 2 ? "%.6f" : "%.9g", x);
    samples.push_back(buf);
  }
  for (const std::string& s : samples) {
    float fast = 0, reference = 0;
    const auto a = parse_float(s.data(), s.data() + s.size(), fast);
    const auto b = std::from_chars(s.data(), s.data() + s.size(), reference);
    INFO(s);
    REQUIRE(a.ec == b.ec);
    REQUIRE(a.ptr == b.ptr);
    if (a.ec == std::errc() && !std::isnan(reference)) REQUIRE(std::memcmp(&fast, &reference, sizeof(float)) == 0);
  }
}

TEST_CASE("parse_int64 returns what std::from_chars returns", "[datasets]") {
  for (const std::string s : {"0", "7", "-3", "123456789012345678", "1234567890123456789", "99999999999999999999",
                              "12,3", "x", ""}) {
    std::int64_t fast = 11, reference = 11;
    const auto a = parse_int64(s.data(), s.data() + s.size(), fast);
    const auto b = std::from_chars(s.data(), s.data() + s.size(), reference);
    INFO(s);
    CHECK(a.ec == b.ec);
    CHECK(a.ptr == b.ptr);
    CHECK(fast == reference);
  }
}

TEST_CASE("count_newlines counts like a naive loop at every length and alignment", "[datasets]") {
  std::mt19937 rng(3);
  std::string text(20000, 'x');
  for (char& ch : text) ch = rng() % 5 == 0 ? '\n' : static_cast<char>('0' + rng() % 10);
  for (std::size_t begin : {0u, 1u, 7u, 15u}) {
    for (std::size_t length : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 65u, 255u * 16u + 3u, 19000u}) {
      const char* p = text.data() + begin;
      const std::int64_t naive = std::count(p, p + length, '\n');
      CHECK(count_newlines(p, p + length) == naive);
    }
  }
}

TEST_CASE("LineBlockReader hands out whole lines numbered across blocks, longer lines included", "[datasets]") {
  ScratchDir scratch;
  std::string text;
  for (int i = 1; i <= 3000; ++i) text += std::to_string(i) + (i == 1500 ? std::string(300, '0') : "") + "\n";
  text += "\n\n";  // blank lines at the end are dropped
  halo::test::write_file(scratch / "lines.csv", text);
  LineBlockReader reader(scratch / "lines.csv", 64, 2);
  CHECK(reader.first_line() == "1");
  std::int64_t next_line = 1;
  while (LineBlock* b = reader.next()) {
    CHECK(b->first_line == next_line);
    const bool open_end = b->size > 0 && b->end()[-1] != '\n';
    CHECK(count_newlines(b->begin(), b->end()) + (open_end ? 1 : 0) == b->num_lines);
    // Each line holds its own number, so the block's first line must be the one it claims.
    if (b->num_lines > 0) CHECK(std::stoll(std::string(b->begin(), b->begin() + std::min<std::size_t>(b->size, 4))) == b->first_line);
    next_line += b->num_lines;
    reader.release(b);
  }
  CHECK(next_line == 3001);
  CHECK(reader.total_lines() == 3000);
}

TEST_CASE("LineBlockReader counts lines across the 128 KiB pieces it decodes, and names the line a truncated gzip stops in",
          "[datasets]") {
  ScratchDir scratch;
  std::string text;
  for (int i = 1; i <= 200'000; ++i) text += std::to_string(i) + "," + std::to_string(7 * i) + "\n";  // ~2.6 MB
  text += "\r\n\n";  // blank lines at the end are dropped, "\r" ones too
  const std::string gz = gzip_member(text, 6);
  halo::test::write_file(scratch / "lines.csv.gz", gz);
  for (const std::size_t block : {std::size_t{4} << 20, std::size_t{1} << 20, std::size_t{300'000}}) {
    LineBlockReader reader(scratch / "lines.csv.gz", block);
    std::int64_t next_line = 1;
    while (LineBlock* b = reader.next()) {
      CHECK(b->first_line == next_line);
      const bool open_end = b->size > 0 && b->end()[-1] != '\n';
      CHECK(count_newlines(b->begin(), b->end()) + (open_end ? 1 : 0) == b->num_lines);
      next_line += b->num_lines;
      reader.release(b);
    }
    CHECK(reader.total_lines() == 200'000);
  }
  // Cut in the middle: the error names the line after the last one decoded whole, which a plain
  // GzipReader over the same bytes tells.
  halo::test::write_file(scratch / "cut.csv.gz", gz.substr(0, gz.size() * 3 / 5));
  std::string decoded;
  try {
    GzipReader plain(scratch / "cut.csv.gz");
    std::vector<char> buffer(1 << 16);
    while (const std::size_t n = plain.read(buffer.data(), buffer.size())) decoded.append(buffer.data(), n);
    FAIL("the cut file read to its end");
  } catch (const IoError&) {
  }
  const std::int64_t expected_line = count_newlines(decoded.data(), decoded.data() + decoded.size()) + 1;
  REQUIRE(expected_line > 50'000);
  try {
    LineBlockReader reader(scratch / "cut.csv.gz");
    while (LineBlock* b = reader.next()) reader.release(b);
    FAIL("no error");
  } catch (const IoError& e) {
    CHECK(e.line() == expected_line);
  }
}

TEST_CASE("GzipReader reads concatenated gzip members as one text", "[datasets]") {
  ScratchDir scratch;
  const std::string one = halo::test::ogb_fixture("tiny/raw/edge.csv.gz");
  std::ifstream in(one, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  halo::test::write_file(scratch / "two.csv.gz", bytes + bytes);
  const std::string text = read_text_file(scratch / "two.csv.gz");
  CHECK(text == read_text_file(one) + read_text_file(one));
  const auto columns = read_id_columns<std::int32_t>(scratch / "two.csv.gz", {12, "test"},
                                                     {{4, "src", "test"}, {4, "dst", "test"}});
  CHECK(columns[0].to_vector() == std::vector<std::int32_t>{0, 0, 1, 2, 3, 2, 0, 0, 1, 2, 3, 2});
}

TEST_CASE("read_id_columns reports the first bad line whatever the thread count", "[datasets]") {
  ScratchDir scratch;
  constexpr int rows = 600'000;  // about 8 MB: three 4 MiB blocks
  std::string text;
  text.reserve(rows * 16);
  for (int i = 0; i < rows; ++i) {
    if (i == 199'999) text += "1,x\n";
    else if (i == 549'999) text += "1,-5\n";
    else text += std::to_string(i) + "," + std::to_string((i * 7) % rows) + "\n";
  }
  halo::test::write_file(scratch / "edges.csv", text);
  for (int threads : {1, 2, 4}) {
    const halo::test::ThreadCount scope(threads);
    try {
      read_id_columns<std::int64_t>(scratch / "edges.csv", {rows, "test"}, {{rows, "src", "t"}, {rows, "dst", "t"}});
      FAIL("no error");
    } catch (const IoError& e) {
      CHECK(e.line() == 200'000);
    }
  }
  text.replace(text.find("1,x\n"), 4, "1,2\n");
  text.replace(text.find("1,-5\n"), 5, "1,50\n");
  halo::test::write_file(scratch / "edges.csv", text);
  const auto c = read_id_columns<std::int32_t>(scratch / "edges.csv", {rows, "test"}, {{rows, "src", "t"}, {rows, "dst", "t"}});
  std::int64_t sum = 0;
  for (std::int32_t v : c[1]) sum += v;
  std::int64_t expected = 0;
  for (int i = 0; i < rows; ++i) expected += i == 199'999 ? 2 : i == 549'999 ? 50 : (std::int64_t{i} * 7) % rows;
  CHECK(sum == expected);
  CHECK(c[0][123'456] == 123'456);
}

TEST_CASE("read_float_matrix ends with an error once its stop flag is set, and reads to the end while it is clear", "[datasets]") {
  ScratchDir scratch;
  std::string text;
  for (int i = 0; i < 1000; ++i) text += std::to_string(i) + ".5,-1.25\n";
  halo::test::write_file(scratch / "feat.csv", text);
  std::atomic<bool> stop{true};
  CHECK_THROWS_WITH(read_float_matrix(scratch / "feat.csv", {1000, "test"}, &stop), Contains("stopped before its end"));
  stop = false;
  const halo::Array<float> x = read_float_matrix(scratch / "feat.csv", {1000, "test"}, &stop);
  CHECK(x[999 * 2] == 999.5f);
  CHECK(x[999 * 2 + 1] == -1.25f);
}
