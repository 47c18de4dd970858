// The fast path of the numeric CSV readers: whole lines of plain fields ("-0.48049623",
// "2449028"), parsed with the field boundaries found 64 bytes at a time ahead of the values, so
// that no field's conversion waits for the one before it and the core overlaps them. Values are
// bit for bit what parse_float and parse_int64 give; anything else stops the fast path at the
// start of its line, for the careful reader (csv_numbers.cpp) to parse or to report.
#pragma once

#include <cmath>
#include <cstdint>
#include <system_error>

#include "datasets/detail/parse_number.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace halo::datasets::detail {

// How far parse_plain_lines got: `lines` whole lines, the next one starting at `next`.
struct PlainLines {
  std::int64_t lines = 0;
  const char* next = nullptr;
};

#if defined(__SSE2__)

// Bit k set: p[k] is ',' or '\n' (k < 64).
inline std::uint64_t separator_mask(const char* p) {
  std::uint64_t mask = 0;
  for (int i = 0; i < 4; ++i) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    const __m128i sep = _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(',')), _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\n')));
    mask |= static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(sep))) << (16 * i);
  }
  return mask;
}

// Byte lanes k..15 of a 16-byte vector set, the lanes below k clear (k <= 16).
inline __m128i lanes_from(int k) {
  struct Table {
    alignas(16) unsigned char from[17][16];
    constexpr Table() : from() {
      for (int j = 0; j <= 16; ++j)
        for (int i = 0; i < 16; ++i) from[j][i] = i >= j ? 0xff : 0;
    }
  };
  static constexpr Table table;
  return _mm_load_si128(reinterpret_cast<const __m128i*>(table.from[k]));
}

// The 16 decimal digits in the byte lanes of `digits` (values 0..9, lane 15 the last) as one
// number: three multiply-adds of neighbouring lanes (pairs, fours, eights), then one product.
inline std::uint64_t lanes_value(__m128i digits) {
  const __m128i zero = _mm_setzero_si128();
  const __m128i tens = _mm_set_epi16(1, 10, 1, 10, 1, 10, 1, 10);
  const __m128i pairs = _mm_packs_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(digits, zero), tens),
                                        _mm_madd_epi16(_mm_unpackhi_epi8(digits, zero), tens));
  const __m128i fours = _mm_madd_epi16(pairs, _mm_set_epi16(1, 100, 1, 100, 1, 100, 1, 100));
  const __m128i eights =
      _mm_madd_epi16(_mm_packs_epi32(fours, fours), _mm_set_epi16(1, 10000, 1, 10000, 1, 10000, 1, 10000));
  const std::uint64_t high = static_cast<std::uint32_t>(_mm_cvtsi128_si32(eights));
  const std::uint64_t low = static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(eights, 4)));
  return high * 100000000u + low;
}

// The lanes of `bytes` that hold '0'..'9', set.
inline __m128i digit_lanes(__m128i bytes) {
  return _mm_and_si128(_mm_cmpgt_epi8(bytes, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(bytes, _mm_set1_epi8('9' + 1)));
}

// The field [s, e) as a float, when it is [-]d+.d+ in at most 16 bytes after the sign (so at
// most 15 digits, m < 2^53) and decimal_to_float can decide the rounding. Reads the 16 bytes
// before e, so declines a field ending less than 16 bytes after `readable`, the first byte it may
// read. With the field's last byte in lane 15 a fraction digit weighs 10^(15 - lane); the whole
// part moves one lane up over the '.' to follow the same rule.
inline bool plain_decimal_field(const char* readable, const char* s, const char* e, float& value) {
  const bool negative = *s == '-';
  if (e - readable < 16 || e - s > 17) return false;
  const int n = static_cast<int>(e - s) - (negative ? 1 : 0);
  if (n < 3 || n > 16) return false;
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(e - 16));
  const __m128i digit = digit_lanes(bytes);
  const unsigned range = (0xffffu << (16 - n)) & 0xffffu;
  const unsigned digits = static_cast<unsigned>(_mm_movemask_epi8(digit)) & range;
  const unsigned dots = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('.')))) & range;
  // One '.', every other byte of the field a digit, and a digit on each side of the '.'.
  if (dots == 0 || (dots & (dots - 1)) != 0 || (digits | dots) != range || (dots & 0x8000u) != 0 ||
      (dots & (1u << (16 - n))) != 0)
    return false;
  const int dot = __builtin_ctz(dots);
  const __m128i d = _mm_and_si128(_mm_sub_epi8(bytes, _mm_set1_epi8('0')), _mm_and_si128(digit, lanes_from(16 - n)));
  const __m128i fraction_part = lanes_from(dot);
  const __m128i shifted = _mm_or_si128(_mm_and_si128(d, fraction_part), _mm_slli_si128(_mm_andnot_si128(fraction_part, d), 1));
  return decimal_to_float(lanes_value(shifted), 15 - dot, negative, value);
}

// The field [s, e) as a non-negative integer, when it is 1 to 16 digits. Reads the 16 bytes
// before e, so declines a field ending less than 16 bytes after `readable`.
inline bool plain_integer_field(const char* readable, const char* s, const char* e, std::int64_t& value) {
  if (e - readable < 16 || e - s > 16) return false;
  const int n = static_cast<int>(e - s);
  if (n < 1) return false;
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(e - 16));
  const __m128i digit = digit_lanes(bytes);
  const unsigned range = (0xffffu << (16 - n)) & 0xffffu;
  if ((static_cast<unsigned>(_mm_movemask_epi8(digit)) & range) != range) return false;
  value = static_cast<std::int64_t>(
      lanes_value(_mm_and_si128(_mm_sub_epi8(bytes, _mm_set1_epi8('0')), lanes_from(16 - n))));
  return true;
}

// Parses up to max_lines lines of [begin, end), each of exactly `cols` comma-separated fields
// ending in '\n': field(k, c, s, e) takes field c of line k, the bytes [s, e), and returns
// whether it could (the field readers above with `begin` as their first readable byte). The
// first line with a field that `field` declines, or the wrong field count, ends the run, as does
// a line whose '\n' lies in the tail of fewer than 64 bytes left over by the 64-byte steps from
// `begin`; `next` points to that line's start, some of whose fields may have been taken. Cost:
// one pass over the text; deterministic.
template <class Field>
PlainLines parse_plain_lines(const char* begin, const char* end, std::int64_t max_lines, std::int64_t cols,
                             Field&& field) {
  PlainLines done{0, begin};
  if (cols <= 0 || max_lines <= 0) return done;
  std::int64_t c = 0;
  const char* s = begin;
  for (const char* chunk = begin; end - chunk >= 64; chunk += 64) {
    std::uint64_t seps = separator_mask(chunk);
    while (seps != 0) {
      const char* e = chunk + __builtin_ctzll(seps);
      seps &= seps - 1;
      if (!field(done.lines, c, s, e)) return done;
      s = e + 1;
      if (*e == ',') {
        if (++c == cols) return done;
        continue;
      }
      if (c != cols - 1) return done;
      c = 0;
      done = {done.lines + 1, s};
      if (done.lines == max_lines) return done;
    }
  }
  return done;
}

#else

// Without SSE2 the fast path takes nothing and the careful reader parses every line.
inline bool plain_decimal_field(const char*, const char*, const char*, float&) { return false; }
inline bool plain_integer_field(const char*, const char*, const char*, std::int64_t&) { return false; }

template <class Field>
PlainLines parse_plain_lines(const char* begin, const char*, std::int64_t, std::int64_t, Field&&) {
  return {0, begin};
}

#endif

// For the fields the plain readers decline: one whole number that parse_float reads to the
// field's end and that is finite ("1e-05", a field at a block's start).
__attribute__((noinline)) inline bool whole_float_field(const char* s, const char* e, float& value) {
  const std::from_chars_result r = parse_float(s, e, value);
  return r.ec == std::errc() && r.ptr == e && std::isfinite(value);
}

// Likewise for ids: a non-negative integer that parse_int64 reads to the field's end.
__attribute__((noinline)) inline bool whole_integer_field(const char* s, const char* e, std::int64_t& value) {
  const std::from_chars_result r = parse_int64(s, e, value);
  return r.ec == std::errc() && r.ptr == e && value >= 0;
}

// The fast path's reading of one float field [s, e): the plain reader's value, or else the whole
// field's; false when neither takes it (the careful reader then parses or reports the line).
inline bool fast_float_field(const char* readable, const char* s, const char* e, float& value) {
  return plain_decimal_field(readable, s, e, value) || whole_float_field(s, e, value);
}

// Likewise for one id field: a non-negative integer.
inline bool fast_id_field(const char* readable, const char* s, const char* e, std::int64_t& value) {
  return plain_integer_field(readable, s, e, value) || whole_integer_field(s, e, value);
}

}  // namespace halo::datasets::detail
