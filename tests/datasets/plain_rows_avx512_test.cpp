// Tests of datasets/detail/plain_rows_avx512.*: the AVX-512 row readers against the SSE2 line
// walker with the scalar field readers (parse_plain_lines, itself tested against std::from_chars):
// on random texts of every field shape, at every column count around the four-field step, with
// defects on random lines and lines cut by max_lines, both must stop on the same line and write
// the same bits for the lines they take. Skipped, saying so, on CPUs without AVX-512.
#include "datasets/detail/plain_rows_avx512.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/datasets/random_csv_fields.hpp"
#include "tests/support/skip.hpp"

using namespace halo::datasets::detail;

namespace {

// A text of `lines` lines of `cols` fields from `field`, each line ending in '\n' or, once in a
// while, "\r\n"; a field `field` gives may be one the readers decline, which ends their run.
template <class Field>
std::string random_text(std::mt19937_64& rng, std::int64_t lines, std::int64_t cols, Field&& field) {
  std::string text;
  for (std::int64_t k = 0; k < lines; ++k) {
    // Now and then a line with one field too few or too many.
    const std::int64_t n = rng() % 500 == 0 ? cols + (rng() % 2 ? 1 : -1) : cols;
    for (std::int64_t c = 0; c < n; ++c) text += (c ? "," : "") + field(rng);
    text += rng() % 1000 == 0 ? "\r\n" : "\n";
  }
  if (rng() % 2) text.pop_back();  // a last line without its '\n'
  return text;
}

bool avx512_or_skip() {
  if (avx512_rows_supported()) return true;
  halo::test::mark_skipped();
  WARN("skipped: this CPU lacks AVX-512 F/BW/DQ/VL or BMI2, so halo reads CSV with its SSE2 walker");
  return false;
}

}  // namespace

TEST_CASE("parse_float_rows_avx512 stops where parse_plain_lines stops and writes the same bits", "[datasets]") {
  if (!avx512_or_skip()) return;
  std::mt19937_64 rng(31);
  // Mostly fields the readers take, one in `rare` a field of any shape.
  std::uint64_t rare = 20'000;
  const auto field = [&](std::mt19937_64& r) {
    std::string f;
    float ignored;
    do f = halo::test::random_field(r);
    while (r() % rare != 0 && !whole_float_field(f.data(), f.data() + f.size(), ignored));
    return f;
  };
  std::int64_t lines_taken = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t cols = std::vector<std::int64_t>{1, 2, 3, 4, 5, 7, 8, 100}[rng() % 8];
    rare = std::vector<std::uint64_t>{50, 2'000, 1'000'000}[rng() % 3];
    const std::int64_t lines = 1 + static_cast<std::int64_t>(rng() % (cols >= 50 ? 40 : 600));
    const std::string text = random_text(rng, lines, cols, field);
    const std::int64_t max_lines = rng() % 4 == 0 ? static_cast<std::int64_t>(rng() % (lines + 1)) : lines;
    const char* begin = text.data();
    const char* end = begin + text.size();
    std::vector<float> wide(static_cast<std::size_t>((lines + 1) * cols), std::nanf("")), narrow = wide;
    const PlainLines a = parse_float_rows_avx512(begin, end, max_lines, cols, wide.data());
    const PlainLines b = parse_plain_lines(begin, end, max_lines, cols, [&](std::int64_t k, std::int64_t c, const char* s, const char* e) {
      return fast_float_field(begin, s, e, narrow[static_cast<std::size_t>(k * cols + c)]);
    });
    INFO("trial " << trial << ", " << cols << " columns, " << lines << " lines, max " << max_lines);
    REQUIRE(a.lines == b.lines);
    REQUIRE(a.next == b.next);
    CHECK(std::memcmp(wide.data(), narrow.data(), sizeof(float) * static_cast<std::size_t>(a.lines * cols)) == 0);
    lines_taken += a.lines;
  }
  CHECK(lines_taken > 20'000);  // the runs are long, not stopped at once
}

TEST_CASE("parse_float_rows_avx512 reads each shape of field as fast_float_field does", "[datasets]") {
  if (!avx512_or_skip()) return;
  // One field of each shape, between plain ones, at each of the four lanes of a step.
  const char* const shapes[] = {"0.5",   "-0.5",  "-0.0",     "12345678.901234", "1234567.8901234", "123456789012.3",
                                "1.0e3", "1e-05", ".5",       "5.",              "-.5",             "--1.5",
                                "1.5.5", "+1.5",  "16777217.0", "1.5x",          "",                "-",
                                "00.25", "7",     "0.000000000000000001", "123456789012345.6"};
  for (const char* shape : shapes) {
    for (int lane = 0; lane < 4; ++lane) {
      std::string text;
      for (int k = 0; k < 40; ++k) {
        for (int c = 0; c < 4; ++c) text += std::string(c ? "," : "") + (k == 20 && c == lane ? shape : "-1.25");
        text += "\n";
      }
      const char* begin = text.data();
      std::vector<float> wide(160, std::nanf("")), narrow = wide;
      const PlainLines a = parse_float_rows_avx512(begin, begin + text.size(), 40, 4, wide.data());
      const PlainLines b = parse_plain_lines(begin, begin + text.size(), 40, 4, [&](std::int64_t k, std::int64_t c, const char* s, const char* e) {
        return fast_float_field(begin, s, e, narrow[static_cast<std::size_t>(k * 4 + c)]);
      });
      INFO("field '" << shape << "' in column " << lane);
      REQUIRE(a.lines == b.lines);
      CHECK(a.next == b.next);
      CHECK(std::memcmp(wide.data(), narrow.data(), sizeof(float) * static_cast<std::size_t>(a.lines * 4)) == 0);
    }
  }
}

TEST_CASE("parse_id_rows_avx512 stops where parse_plain_lines stops and writes the same ids", "[datasets]") {
  if (!avx512_or_skip()) return;
  std::mt19937_64 rng(32);
  std::uint64_t rare = 20'000;
  const auto field = [&](std::mt19937_64& r) {
    std::string f;
    const int digits = r() % rare == 0 ? static_cast<int>(r() % 18) : 1 + static_cast<int>(r() % 9);
    for (int d = 0; d < digits; ++d) f += static_cast<char>('0' + r() % 10);
    if (r() % rare == 0) f.insert(r() % (f.size() + 1), 1, "-+x. "[r() % 5]);
    return f;
  };
  std::int64_t lines_taken = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t cols = std::vector<std::int64_t>{1, 2, 2, 2, 3, 4, 5}[rng() % 7];
    rare = std::vector<std::uint64_t>{50, 2'000, 1'000'000}[rng() % 3];
    const std::int64_t lines = 1 + static_cast<std::int64_t>(rng() % 2'000);
    const std::string text = random_text(rng, lines, cols, field);
    const std::int64_t max_lines = rng() % 4 == 0 ? static_cast<std::int64_t>(rng() % (lines + 1)) : lines;
    // Limits that every plain id meets, or that some ids reach.
    std::vector<std::int64_t> limits;
    for (std::int64_t c = 0; c < cols; ++c) limits.push_back(rng() % 3 == 0 ? 1 + static_cast<std::int64_t>(rng() % 900'000'000) : 1'000'000'000);
    const char* begin = text.data();
    const char* end = begin + text.size();
    std::vector<std::vector<std::int32_t>> wide(static_cast<std::size_t>(cols), std::vector<std::int32_t>(lines + 1, -7));
    std::vector<std::vector<std::int32_t>> narrow = wide;
    std::vector<std::int32_t*> wide_columns;
    for (auto& column : wide) wide_columns.push_back(column.data());
    const PlainLines a = parse_id_rows_avx512(begin, end, max_lines, cols, limits.data(), wide_columns.data());
    const PlainLines b = parse_plain_lines(begin, end, max_lines, cols, [&](std::int64_t k, std::int64_t c, const char* s, const char* e) {
      std::int64_t v = 0;
      if (!fast_id_field(begin, s, e, v) || v >= limits[static_cast<std::size_t>(c)]) return false;
      narrow[static_cast<std::size_t>(c)][static_cast<std::size_t>(k)] = static_cast<std::int32_t>(v);
      return true;
    });
    INFO("trial " << trial << ", " << cols << " columns, " << lines << " lines, max " << max_lines);
    REQUIRE(a.lines == b.lines);
    REQUIRE(a.next == b.next);
    for (std::int64_t c = 0; c < cols; ++c) {
      const auto& x = wide[static_cast<std::size_t>(c)];
      const auto& y = narrow[static_cast<std::size_t>(c)];
      CHECK(std::vector<std::int32_t>(x.begin(), x.begin() + a.lines) == std::vector<std::int32_t>(y.begin(), y.begin() + a.lines));
    }
    lines_taken += a.lines;
  }
  CHECK(lines_taken > 20'000);
}

TEST_CASE("parse_id_rows_avx512 writes 64-bit ids of 15 digits and leaves a 16-digit id to the scalar reader", "[datasets]") {
  if (!avx512_or_skip()) return;
  std::string text;
  for (int k = 0; k < 30; ++k) text += std::to_string(999'999'999'999'999 - k) + "," + std::to_string(k) + "\n";
  text += "1234567890123456,1\n";
  for (int k = 0; k < 30; ++k) text += "1,2\n";
  std::vector<std::int64_t> a(61, -1), b(61, -1);
  std::int64_t* columns[] = {a.data(), b.data()};
  const std::int64_t limits[] = {std::int64_t{1} << 62, 100};
  const char* begin = text.data();
  const PlainLines done = parse_id_rows_avx512(begin, begin + text.size(), 61, 2, limits, columns);
  // plain_integer_field takes 16 digits too; the AVX-512 steps hand that line to it.
  const PlainLines walker = parse_plain_lines(begin, begin + text.size(), 61, 2, [&](std::int64_t, std::int64_t c, const char* s, const char* e) {
    std::int64_t v = 0;
    return fast_id_field(begin, s, e, v) && v < limits[c];
  });
  CHECK(done.lines == walker.lines);
  CHECK(done.next == walker.next);
  REQUIRE(done.lines >= 31);
  CHECK(a[0] == 999'999'999'999'999);
  CHECK(a[29] == 999'999'999'999'970);
  CHECK(b[29] == 29);
  CHECK(a[30] == 1'234'567'890'123'456);
}
