// Tests of the 16-bit float conversions: every float16 and bfloat16 value against its closed form,
// rounding to nearest with ties to even at every midpoint, overflow to infinity, and the bulk
// widening (F16C where the CPU has it) equal to the scalar one for all 65,536 patterns.
#include "graph/base/half.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

using halo::HalfFormat;

namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// The value a float16 pattern encodes, from IEEE 754's definition, in double.
double float16_closed_form(std::uint16_t h) {
  const int sign = (h >> 15) != 0 ? -1 : 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0x1f) return mantissa == 0 ? sign * std::numeric_limits<double>::infinity() : std::nan("");
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

bool is_nan16(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

}  // namespace

TEST_CASE("float16_to_float gives every pattern's IEEE value and float_to_float16 gives the pattern back", "[unit]") {
  for (std::uint32_t p = 0; p < 65536; ++p) {
    const auto h = static_cast<std::uint16_t>(p);
    const float f = halo::float16_to_float(h);
    if (is_nan16(h)) {
      REQUIRE(std::isnan(f));
      REQUIRE(std::isnan(halo::float16_to_float(halo::float_to_float16(f))));
      continue;
    }
    INFO(p);
    REQUIRE(static_cast<double>(f) == float16_closed_form(h));
    REQUIRE(halo::float_to_float16(f) == h);  // -0 stays -0
  }
}

TEST_CASE("float_to_float16 rounds to nearest with ties to even and overflows to infinity", "[unit]") {
  // Every pair of neighbouring positive finite float16 values: their midpoint is exact in float.
  for (std::uint16_t h = 0; h < 0x7bff; ++h) {
    const float low = halo::float16_to_float(h);
    const float high = halo::float16_to_float(static_cast<std::uint16_t>(h + 1));
    const float middle = (low + high) / 2;
    INFO(h);
    REQUIRE(halo::float_to_float16(middle) == ((h & 1u) == 0 ? h : h + 1));
    REQUIRE(halo::float_to_float16(std::nextafter(middle, 0.0f)) == h);
    REQUIRE(halo::float_to_float16(std::nextafter(middle, 1e9f)) == h + 1);
    REQUIRE(halo::float_to_float16(-middle) == (((h & 1u) == 0 ? h : h + 1) | 0x8000u));
  }
  CHECK(halo::float_to_float16(65504.0f) == 0x7bff);
  CHECK(halo::float_to_float16(std::nextafter(65520.0f, 0.0f)) == 0x7bff);
  CHECK(halo::float_to_float16(65520.0f) == 0x7c00);  // the midpoint to the next power ties to infinity
  CHECK(halo::float_to_float16(-1e30f) == 0xfc00);
  CHECK(halo::float_to_float16(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK(halo::float_to_float16(std::ldexp(1.0f, -25)) == 0x0000);  // half the smallest subnormal: ties to 0
  CHECK(halo::float_to_float16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
  CHECK(halo::float_to_float16(1e-30f) == 0x0000);
  CHECK_FALSE(halo::half_is_finite(HalfFormat::float16, 0x7c00));
  CHECK(halo::half_is_finite(HalfFormat::float16, 0x7bff));
}

TEST_CASE("bfloat16 is the upper half of a float, rounded to nearest with ties to even", "[unit]") {
  for (std::uint32_t p = 0; p < 65536; ++p) {
    const auto h = static_cast<std::uint16_t>(p);
    const float f = halo::bfloat16_to_float(h);
    REQUIRE(bits_of(f) == p << 16);
    if (!std::isnan(f)) REQUIRE(halo::float_to_bfloat16(f) == h);
  }
  // Below, at and above the midpoint between 1 and the next bfloat16 (1 + 2^-7), and the tie to
  // even from the odd 1 + 2^-7 upwards.
  const float one = 1.0f, next = 1.0f + std::ldexp(1.0f, -7);
  CHECK(halo::float_to_bfloat16((one + next) / 2) == 0x3f80);
  CHECK(halo::float_to_bfloat16(std::nextafter((one + next) / 2, 2.0f)) == 0x3f81);
  CHECK(halo::float_to_bfloat16(next + std::ldexp(1.0f, -8)) == 0x3f82);
  CHECK(halo::float_to_bfloat16(std::numeric_limits<float>::max()) == 0x7f80);  // rounds past the largest bfloat16
  CHECK_FALSE(halo::half_is_finite(HalfFormat::bfloat16, 0x7f80));
  CHECK(halo::half_is_finite(HalfFormat::bfloat16, 0x7f7f));
}

TEST_CASE("widen_halves gives the scalar conversion of every pattern at every alignment", "[unit]") {
  std::vector<std::uint16_t> all(65536 + 3);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i * 40503u);  // a permutation
  for (HalfFormat format : {HalfFormat::float16, HalfFormat::bfloat16}) {
    for (int offset : {0, 1, 3}) {
      std::vector<float> out(all.size(), -7.0f);  // poisoned
      const std::int64_t n = static_cast<std::int64_t>(all.size()) - offset;
      halo::widen_halves(format, all.data() + offset, out.data(), n);
      for (std::int64_t i = 0; i < n; ++i) {
        const std::uint16_t h = all[static_cast<std::size_t>(i + offset)];
        const float expected = halo::half_to_float(format, h);
        INFO(i);
        if (std::isnan(expected))
          REQUIRE(std::isnan(out[static_cast<std::size_t>(i)]));
        else
          REQUIRE(bits_of(out[static_cast<std::size_t>(i)]) == bits_of(expected));
      }
      for (std::size_t i = static_cast<std::size_t>(n); i < out.size(); ++i) REQUIRE(out[i] == -7.0f);
    }
  }
}
