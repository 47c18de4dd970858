// Tests of datasets/detail/parse_number.hpp against std::from_chars: the float fast paths (16 bytes
// at a time and digit by digit) where they are hardest to get right (decimals next to, or on, the
// midpoint between two adjacent floats, where rounding through double could differ from rounding
// once), and integers at every length and buffer end.
#include "datasets/detail/parse_number.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace halo::datasets::detail;

namespace {

// parse_float and std::from_chars agree on `s` alone and on `s` followed by text that ends it,
// extends it or makes it an exponent form: same error, same end, same bits. The suffixes leave
// at least 17 bytes after the sign, so the 16-byte path runs as well as the digit-by-digit one.
bool same_as_from_chars(const std::string& s) {
  for (const char* suffix : {"", ",-0.123456,0.5\n", "\n0,1,2,3,4,5,6,7,8,9", "e5,1,2,3,4,5,6,7,8,9",
                             "E-3,0000000000000000", ".5,00000000000000000", "7,00000000000000000000",
                             "x0000000000000000000"}) {
    const std::string text = s + suffix;
    const char* end = text.data() + text.size();
    float fast = 0, reference = 0;
    const auto a = parse_float(text.data(), end, fast);
    const auto b = std::from_chars(text.data(), end, reference);
    if (a.ec != b.ec || a.ptr != b.ptr || std::memcmp(&fast, &reference, sizeof(float)) != 0) return false;
  }
  return true;
}

std::string print(const char* format, int precision, double x) {
  char text[64];
  std::snprintf(text, sizeof text, format, precision, x);
  return text;
}

}  // namespace

TEST_CASE("parse_float rounds decimals next to a float midpoint as std::from_chars does", "[datasets]") {
  std::mt19937_64 rng(11);
  std::vector<std::string> samples = {"16777217", "16777219", "33554434", "-16777217", "0.0000000000000000001234",
                                      "9007199254740993", "9007199254740992", "1.000000059604645",
                                      "1.0000000596046448", "0.50000002980232238769531250"};
  for (int i = 0; i < 5'000; ++i) {
    // A float f in [1e-20, 1e15) and the exact midpoint to the next float up (a double).
    const float f = static_cast<float>(std::ldexp(1.0 + std::uniform_real_distribution<double>(0, 1)(rng),
                                                  static_cast<int>(rng() % 116) - 66));
    const double mid = (static_cast<double>(f) + static_cast<double>(std::nextafter(f, INFINITY))) / 2;
    for (const double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, INFINITY)}) {
      for (int precision : {9, 12, 15, 16, 17}) {
        samples.push_back(print("%.*g", precision, x));
        samples.push_back(print("%.*f", precision, x));
      }
    }
  }
  std::vector<std::string> differ;
  for (const std::string& s : samples)
    if (!same_as_from_chars(s)) differ.push_back(s);
  CAPTURE(samples.size(), differ);
  CHECK(differ.empty());
}

TEST_CASE("parse_float reads every [-]digits.digits shape up to 9 + 9 digits as std::from_chars does", "[datasets]") {
  std::mt19937_64 rng(15);
  std::vector<std::string> samples = {"-0.0", "0.0", "00000001.5", "0.00000001", "99999999.99999999", "-1.00000000"};
  for (int whole = 1; whole <= 9; ++whole) {
    for (int fraction = 1; fraction <= 9; ++fraction) {
      for (int k = 0; k < 200; ++k) {
        std::string s = k % 2 ? "-" : "";
        for (int d = 0; d < whole; ++d) s += static_cast<char>('0' + rng() % 10);
        s += '.';
        for (int d = 0; d < fraction; ++d) s += static_cast<char>('0' + rng() % 10);
        samples.push_back(s);
      }
    }
  }
  std::vector<std::string> differ;
  for (const std::string& s : samples)
    if (!same_as_from_chars(s)) differ.push_back(s);
  CAPTURE(differ);
  CHECK(differ.empty());
}

TEST_CASE("parse_float matches std::from_chars on the shortest forms of random floats", "[datasets]") {
  std::mt19937 rng(12);
  std::vector<std::string> differ;
  for (int i = 0; i < 50'000; ++i) {
    std::uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    if (!std::isfinite(f)) continue;
    char text[64];
    const auto r = std::to_chars(text, text + sizeof text, f, i % 2 ? std::chars_format::fixed : std::chars_format::general);
    if (r.ec != std::errc()) continue;
    const std::string s(text, r.ptr);
    if (!same_as_from_chars(s)) differ.push_back(s);
  }
  CAPTURE(differ);
  CHECK(differ.empty());
}

TEST_CASE("parse_int64 matches std::from_chars at every length and buffer end", "[datasets]") {
  std::mt19937_64 rng(14);
  std::vector<std::string> differ;
  for (int i = 0; i < 50'000; ++i) {
    const int length = 1 + static_cast<int>(rng() % 21);
    std::string s;
    for (int k = 0; k < length; ++k) s += static_cast<char>('0' + rng() % 10);
    s += ",\n9x"[rng() % 4];
    s += std::to_string(rng() % 1000);
    // Every end position: the 8-byte path near the end falls back to the byte loop.
    for (std::size_t cut = 1; cut <= s.size(); cut += 1 + rng() % 5) {
      std::int64_t fast = 7, reference = 7;
      const auto a = parse_int64(s.data(), s.data() + cut, fast);
      const auto b = std::from_chars(s.data(), s.data() + cut, reference);
      if (a.ec != b.ec || a.ptr != b.ptr || fast != reference) differ.push_back(s.substr(0, cut));
    }
  }
  CAPTURE(differ);
  CHECK(differ.empty());
}
