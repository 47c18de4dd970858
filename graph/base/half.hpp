// 16-bit floats as halo stores features: IEEE binary16 ("float16", numpy's <f2) and bfloat16 (the
// upper half of a binary32, stored as raw uint16). Scalar conversions, exact to the bit (round to
// nearest, ties to even, as numpy's astype and the F16C instructions round), and the bulk widening
// the feature readers run per block (F16C when the CPU has it, the scalar loop otherwise; both
// give the same bits).
#pragma once

#include <cstdint>
#include <cstring>

namespace halo {

// Which 16-bit format a buffer of uint16 holds.
enum class HalfFormat { float16, bfloat16 };

inline float float16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1fu) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf, NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);  // rebias 15 -> 127
  } else {
    // Zero or subnormal: mantissa x 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    std::memcpy(&bits, &magnitude, sizeof bits);
    bits |= sign;
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Rounds to the nearest float16, ties to even; magnitudes from 65520 up become infinity.
inline std::uint16_t float_to_float16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));  // NaN stays NaN
  if (x >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // 65520 and up, and inf
  const auto round_shifted = [](std::uint32_t value, int shift) {
    std::uint32_t kept = value >> shift;
    const std::uint32_t rest = value & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1u) != 0)) ++kept;  // a carry moves into the exponent, as it should
    return kept;
  };
  if (x >= 0x38800000u) return static_cast<std::uint16_t>(sign | round_shifted(x - 0x38000000u, 13));  // normal
  if (x < 0x33000000u) return sign;  // below 2^-25 (2^-25 itself ties to the even zero)
  // Subnormal: the value in units of 2^-24.
  const int exponent = static_cast<int>(x >> 23);
  return static_cast<std::uint16_t>(sign | round_shifted((x & 0x7fffffu) | 0x800000u, 126 - exponent));
}

inline float bfloat16_to_float(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Rounds to the nearest bfloat16, ties to even; magnitudes that round past the largest finite
// bfloat16 become infinity.
inline std::uint16_t float_to_bfloat16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // NaN stays NaN
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float half_to_float(HalfFormat format, std::uint16_t h) {
  return format == HalfFormat::float16 ? float16_to_float(h) : bfloat16_to_float(h);
}

inline std::uint16_t float_to_half(HalfFormat format, float f) {
  return format == HalfFormat::float16 ? float_to_float16(f) : float_to_bfloat16(f);
}

// Whether a 16-bit value is finite (not infinity, not NaN).
inline bool half_is_finite(HalfFormat format, std::uint16_t h) {
  return format == HalfFormat::float16 ? (h & 0x7c00u) != 0x7c00u : (h & 0x7f80u) != 0x7f80u;
}

// out[i] = the float of in[i], i < n. One thread; O(n).
void widen_halves(HalfFormat format, const std::uint16_t* in, float* out, std::int64_t n);

}  // namespace halo
