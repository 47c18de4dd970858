// Number parsing for the CSV readers: std::from_chars semantics, with exact fast paths for the
// plain forms OGB files are made of ("1234", "-0.057943", "0.48049623"). The fast paths return
// the same value as std::from_chars bit for bit; anything else goes to std::from_chars.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <system_error>

namespace halo::datasets::detail {

inline bool is_digit(char ch) { return static_cast<unsigned>(ch - '0') < 10u; }

// Like std::from_chars(p, end, value) for int64; up to 18 plain digits are read inline.
inline std::from_chars_result parse_int64(const char* p, const char* end, std::int64_t& value) {
  const char* q = p;
  std::uint64_t v = 0;
  int digits = 0;
  while (q != end && is_digit(*q) && digits < 18) {
    v = v * 10 + static_cast<std::uint64_t>(*q - '0');
    ++q;
    ++digits;
  }
  if (digits == 0 || (q != end && is_digit(*q))) return std::from_chars(p, end, value);
  value = static_cast<std::int64_t>(v);
  return {q, std::errc()};
}

// Like std::from_chars(p, end, value) for float (general format). A plain decimal
// [-]digits[.digits] whose digits form an integer m <= 2^53 with at most 22 after the point is
// m / 10^k: one IEEE double division of two exactly representable doubles, correctly rounded
// (Clinger's fast path). Rounding that double to float gives the correctly rounded float, as
// from_chars does, unless the double landed exactly on a midpoint between two floats (the
// only place where rounding twice can differ from rounding once: float midpoints are doubles,
// so the exact quotient and its double lie on the same side of every other midpoint); that rare
// case, and every other form, goes to std::from_chars.
inline std::from_chars_result parse_float(const char* p, const char* end, float& value) {
  static constexpr double powers[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char* q = p;
  const bool negative = q != end && *q == '-';
  if (negative) ++q;
  std::uint64_t m = 0;
  int digits = 0;
  int fraction = 0;
  while (q != end && is_digit(*q) && digits < 19) {
    m = m * 10 + static_cast<std::uint64_t>(*q - '0');
    ++q;
    ++digits;
  }
  if (q != end && *q == '.') {
    ++q;
    while (q != end && is_digit(*q) && digits < 19) {
      m = m * 10 + static_cast<std::uint64_t>(*q - '0');
      ++q;
      ++digits;
      ++fraction;
    }
  }
  const bool plain = digits > 0 && (q == end || !(is_digit(*q) || *q == '.' || *q == 'e' || *q == 'E'));
  if (!plain || m > (std::uint64_t{1} << 53) || fraction > 22) return std::from_chars(p, end, value);
  const double quotient = static_cast<double>(m) / powers[fraction];
  // |quotient| is 0 or in [1e-22, 2^53], where floats are normal: a float midpoint has a 1
  // followed by 28 zeros in the low 29 of the double's 52 fraction bits.
  std::uint64_t bits;
  std::memcpy(&bits, &quotient, sizeof bits);
  if ((bits & 0x1fffffffu) == 0x10000000u) return std::from_chars(p, end, value);
  const float magnitude = static_cast<float>(quotient);
  value = negative ? -magnitude : magnitude;
  return {q, std::errc()};
}

}  // namespace halo::datasets::detail
