// Tests of datasets/detail/plain_csv_lines.hpp: the SIMD field readers against std::from_chars
// (same value bit for bit, or declined, never a different value), the line walker against the
// field-by-field reading of the same text, and where it stops on every kind of unusual line;
// then read_float_matrix on a file of several blocks, values and the line of a bad field.
#include "datasets/detail/plain_csv_lines.hpp"

#include <catch2/catch.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "datasets/detail/csv_numbers.hpp"
#include "graph/base/error.hpp"
#include "tests/datasets/ogb_fixture.hpp"
#include "tests/datasets/random_csv_fields.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/thread_count.hpp"

using namespace halo;
using namespace halo::datasets::detail;
using halo::test::random_field;

namespace {

// 16 bytes of other text before every field: the readers load the 16 bytes that end the field.
const std::string kBefore = "0123456789,98765,";

}  // namespace

TEST_CASE("plain_decimal_field gives std::from_chars's value bit for bit, or declines", "[datasets]") {
  std::mt19937_64 rng(21);
  std::int64_t taken = 0;
  std::vector<std::string> differ;
  for (int i = 0; i < 200'000; ++i) {
    const std::string field = random_field(rng);
    const std::string text = kBefore + field + ",";
    const char* s = text.data() + kBefore.size();
    const char* e = text.data() + text.size() - 1;
    float fast = -7.0f;
    if (!plain_decimal_field(text.data(), s, e, fast)) continue;
    ++taken;
    float reference = 0;
    const auto r = std::from_chars(s, e, reference);
    if (r.ec != std::errc() || r.ptr != e || std::memcmp(&fast, &reference, sizeof(float)) != 0) differ.push_back(field);
  }
  CAPTURE(differ);
  CHECK(differ.empty());
  CHECK(taken > 60'000);  // the fast path does run
  float v = 0;
  const std::string midpoint = kBefore + "16777217.0,";
  CHECK_FALSE(
      plain_decimal_field(midpoint.data(), midpoint.data() + kBefore.size(), midpoint.data() + midpoint.size() - 1, v));
}

TEST_CASE("plain_integer_field gives std::from_chars's value, or declines", "[datasets]") {
  std::mt19937_64 rng(22);
  std::vector<std::string> differ;
  std::int64_t taken = 0;
  for (int i = 0; i < 100'000; ++i) {
    std::string field;
    const int length = static_cast<int>(rng() % 19);
    for (int d = 0; d < length; ++d) field += static_cast<char>('0' + rng() % 10);
    if (rng() % 10 == 0) field.insert(rng() % (field.size() + 1), 1, "-+x."[rng() % 4]);
    const std::string text = kBefore + field + "\n";
    const char* s = text.data() + kBefore.size();
    const char* e = text.data() + text.size() - 1;
    std::int64_t fast = -7;
    if (!plain_integer_field(text.data(), s, e, fast)) continue;
    ++taken;
    std::int64_t reference = -1;
    const auto r = std::from_chars(s, e, reference);
    if (r.ec != std::errc() || r.ptr != e || fast != reference) differ.push_back(field);
  }
  CAPTURE(differ);
  CHECK(differ.empty());
  CHECK(taken > 50'000);
}

TEST_CASE("parse_plain_lines reads lines as the field-by-field parse does and stops at the first unusual line", "[datasets]") {
  constexpr std::int64_t lines = 400;
  constexpr std::int64_t cols = 7;
  std::mt19937_64 rng(23);
  // Lines of decimals whole_float_field takes (empty and malformed fields replaced).
  std::vector<std::string> line_text;
  for (std::int64_t k = 0; k < lines; ++k) {
    std::string line;
    for (std::int64_t c = 0; c < cols; ++c) {
      std::string f;
      float ignored;
      do f = random_field(rng);
      while (!whole_float_field(f.data(), f.data() + f.size(), ignored));
      line += (c ? "," : "") + f;
    }
    line_text.push_back(line + "\n");
  }
  const char* defects[] = {"1.5,2.5\n",                              // too few fields
                           "1,2,3,4,5,6,7,8\n",                     // too many
                           "1.5,2,3,4,5,6,7\r\n",                    // CRLF
                           "+1.5,2,3,4,5,6,7\n",                     // a '+'
                           "1.5,2,nan,4,5,6,7\n",                    // not finite
                           "1.5,2,,4,5,6,7\n",                       // empty field
                           "1.5,2,3,4,5x,6,7\n"};                    // trailing garbage
  for (const char* defect : defects) {
    for (const std::int64_t bad : {std::int64_t{0}, std::int64_t{1}, std::int64_t{250}}) {
      std::string text;
      std::vector<std::size_t> starts;
      for (std::int64_t k = 0; k < lines; ++k) {
        starts.push_back(text.size());
        text += k == bad ? std::string(defect) : line_text[static_cast<std::size_t>(k)];
      }
      std::vector<float> fast(lines * cols, std::nanf("")), reference(lines * cols, std::nanf(""));
      const char* begin = text.data();
      const PlainLines done = parse_plain_lines(begin, begin + text.size(), lines, cols,
                                                [&](std::int64_t k, std::int64_t c, const char* s, const char* e) {
                                                  float& v = fast[static_cast<std::size_t>(k * cols + c)];
                                                  return fast_float_field(begin, s, e, v);
                                                });
      INFO("defect " << defect << " on line " << bad);
      REQUIRE(done.lines == bad);
      CHECK(done.next == begin + starts[static_cast<std::size_t>(bad)]);
      // Field by field, for the lines taken.
      const char* p = begin;
      for (std::int64_t k = 0; k < bad; ++k)
        for (std::int64_t c = 0; c < cols; ++c) {
          const auto r = parse_float(p, begin + text.size(), reference[static_cast<std::size_t>(k * cols + c)]);
          p = r.ptr + 1;
        }
      CHECK(std::memcmp(fast.data(), reference.data(), sizeof(float) * static_cast<std::size_t>(bad * cols)) == 0);
    }
  }
  // No defect: every line but those reaching into the last 64 bytes, and no more than asked.
  std::string text;
  for (const std::string& line : line_text) text += line;
  const auto take_all = [](std::int64_t, std::int64_t, const char*, const char*) { return true; };
  const PlainLines all = parse_plain_lines(text.data(), text.data() + text.size(), lines, cols, take_all);
  CHECK(all.lines >= lines - 1);
  CHECK(text.data() + text.size() - all.next < 64 + static_cast<std::ptrdiff_t>(line_text.back().size()));
  CHECK(parse_plain_lines(text.data(), text.data() + text.size(), 17, cols, take_all).lines == 17);
}

TEST_CASE("read_float_matrix reads a file of several blocks as parse_float does and names the line of a bad value", "[datasets]") {
  halo::test::ScratchDir scratch;
  constexpr std::int64_t rows = 90'000;  // about 9 MB: three 4 MiB blocks
  constexpr std::int64_t cols = 10;
  std::mt19937_64 rng(24);
  std::string text;
  std::vector<float> expected;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      char field[32];
      const float x = static_cast<float>(std::uniform_real_distribution<double>(-3, 3)(rng));
      std::snprintf(field, sizeof field, (r + c) % 3 ? "%.8g" : "%.3e", static_cast<double>(x));
      float v = 0;
      parse_float(field, field + std::strlen(field), v);
      expected.push_back(v);
      text += (c ? "," : "") + std::string(field);
    }
    text += "\n";
  }
  halo::test::write_file(scratch / "feat.csv", text);
  const halo::Array<float> x = read_float_matrix(scratch / "feat.csv", {rows, "test"});
  REQUIRE(x.size() == rows * cols);
  CHECK(std::memcmp(x.data(), expected.data(), sizeof(float) * expected.size()) == 0);

  const std::size_t line_70001 = [&] {
    std::size_t at = 0;
    for (int k = 0; k < 70'000; ++k) at = text.find('\n', at) + 1;
    return at;
  }();
  text.insert(text.find(',', line_70001) + 1, "inf");
  halo::test::write_file(scratch / "feat.csv", text);
  for (int threads : {1, 2}) {
    const halo::test::ThreadCount scope(threads);
    try {
      read_float_matrix(scratch / "feat.csv", {rows, "test"});
      FAIL("no error");
    } catch (const IoError& e) {
      CHECK(e.line() == 70'001);
    }
  }
}
