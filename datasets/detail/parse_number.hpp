// Number parsing for the CSV readers: std::from_chars semantics, with exact fast paths for the
// plain forms OGB files are made of ("1234", "-0.057943", "0.48049623"). The fast paths return
// the same value as std::from_chars bit for bit; anything else goes to std::from_chars.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <system_error>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// m / 10^fraction (m <= 2^53, fraction <= 22) rounded to float exactly as std::from_chars
// rounds the decimal it came from; false in the rare case this cannot be decided here. The
// quotient of two exactly representable doubles is one correctly rounded IEEE division
// (Clinger's fast path). Rounding that double to float gives the correctly rounded float unless
// the double landed exactly on a midpoint between two floats (the only place where rounding
// twice can differ from rounding once: float midpoints are doubles, so the exact quotient and
// its double lie on the same side of every other midpoint).
inline bool decimal_to_float(std::uint64_t m, int fraction, bool negative, float& value) {
  static constexpr double powers[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  // m <= 2^53 converts exactly, and through int64 without the fix-up for a top bit.
  const double quotient = static_cast<double>(static_cast<std::int64_t>(m)) / powers[fraction];
  // |quotient| is 0 or in [1e-22, 2^53], where floats are normal: a float midpoint has a 1
  // followed by 28 zeros in the low 29 of the double's 52 fraction bits.
  std::uint64_t bits;
  std::memcpy(&bits, &quotient, sizeof bits);
  if ((bits & 0x1fffffffu) == 0x10000000u) return false;
  // The sign goes in as a bit: a branch on it would be mispredicted on half of all features.
  static constexpr float signs[2] = {1.0f, -1.0f};  // exact; -1 * +0 is -0, as from_chars gives
  value = static_cast<float>(quotient) * signs[negative];
  return true;
}

#if defined(__SSE2__)
// The number spelt by the n (1 to 8) decimal digits at p; p must have 8 readable bytes. SWAR:
// subtracting '0' from every byte can borrow only into the bytes after a non-digit, which the
// shift discards; the shift also puts the first (most significant) digit on top, leaving
// leading zeros below, so neighbours combine pairwise into 2-, 4- and 8-digit numbers.
inline std::uint64_t digits_value(const char* p, int n) {
  std::uint64_t x;
  std::memcpy(&x, p, 8);
  std::uint64_t t = (x - 0x3030303030303030ULL) << (8 * (8 - n));
  t = ((t * 10) + (t >> 8)) & 0x00ff00ff00ff00ffULL;
  t = ((t * 100) + (t >> 16)) & 0x0000ffff0000ffffULL;
  return ((t * 10000) + (t >> 32)) & 0xffffffffULL;
}
#endif

// Like std::from_chars(p, end, value) for float (general format). A plain decimal
// [-]digits[.digits] whose digits form an integer m <= 2^53 with at most 22 after the point is
// read inline (decimal_to_float); every other form goes to std::from_chars. The usual feature
// shape, [-]d{1,8}.d{1,8} in at most 15 bytes, is found with one 16-byte comparison and its
// digits read 8 at a time when 17 bytes are readable; the rest go digit by digit.
inline std::from_chars_result parse_float(const char* p, const char* end, float& value) {
  const bool negative = p != end && *p == '-';
  const char* q = p + (negative ? 1 : 0);
#if defined(__SSE2__)
  if (end - q >= 17) {
    static constexpr std::uint64_t scale[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(bytes, _mm_set1_epi8('0' - 1)),
                                        _mm_cmplt_epi8(bytes, _mm_set1_epi8('9' + 1)));
    // Bit k set: byte k is not a digit (bits 16 and up are always set).
    const unsigned not_digit = ~static_cast<unsigned>(_mm_movemask_epi8(digit));
    const int whole = __builtin_ctz(not_digit);
    const int fraction = __builtin_ctz(not_digit >> (whole + 1));
    // whole + fraction <= 14 keeps the byte after the number among the 16 compared (so it is
    // known not to be a digit) and m below 10^14 < 2^53.
    if (whole >= 1 && whole <= 8 && fraction >= 1 && fraction <= 8 && whole + fraction <= 14 && q[whole] == '.') {
      const char* after = q + whole + 1 + fraction;
      if (*after != '.' && (*after | 0x20) != 'e') {
        const std::uint64_t m = digits_value(q, whole) * scale[fraction] + digits_value(q + whole + 1, fraction);
        if (decimal_to_float(m, fraction, negative, value)) return {after, std::errc()};
        return std::from_chars(p, end, value);
      }
    }
  }
#endif
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
  if (!plain || m > (std::uint64_t{1} << 53) || fraction > 22 || !decimal_to_float(m, fraction, negative, value))
    return std::from_chars(p, end, value);
  return {q, std::errc()};
}

}  // namespace halo::datasets::detail
