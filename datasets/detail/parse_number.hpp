// Number parsing for the CSV readers: std::from_chars semantics, with exact fast paths for the
// short plain forms OGB files are made of ("1234", "-0.057943"). The fast paths return the same
// value as std::from_chars bit for bit; anything else goes to std::from_chars.
#pragma once

#include <charconv>
#include <cstdint>
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
// [-]digits[.digits] whose digits form an integer m <= 2^24 with at most 10 after the point is
// m / 10^k in one IEEE division of two exactly representable floats, hence correctly rounded
// (Clinger's fast path), as from_chars is.
inline std::from_chars_result parse_float(const char* p, const char* end, float& value) {
  static constexpr float powers[11] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
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
  if (!plain || m > (std::uint64_t{1} << 24) || fraction > 10) return std::from_chars(p, end, value);
  const float magnitude = static_cast<float>(m) / powers[fraction];
  value = negative ? -magnitude : magnitude;
  return {q, std::errc()};
}

}  // namespace halo::datasets::detail
