// The AVX-512 row readers: separators found 64 bytes at a time into a list of field ends, then
// four fields per step, each right-aligned in its own 128-bit lane (its 15 bytes before the
// separator, the separator in byte 15), checked and converted lane by lane with byte masks. A
// step whose fields are not all plain goes field by field through the scalar readers, which also
// end the run exactly where parse_plain_lines would.
#include "datasets/detail/plain_rows_avx512.hpp"

#include <algorithm>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HALO_AVX512_ROWS_BUILT 1
#else
#define HALO_AVX512_ROWS_BUILT 0
#endif

namespace halo::datasets::detail {

#if HALO_AVX512_ROWS_BUILT

#define HALO_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,bmi,bmi2,popcnt")))

// GCC 12 warns that AVX-512 intrinsics' internal _mm512_undefined_* values may be used
// uninitialised when they are expanded in a target("avx512...") function (GCC bug 105593, fixed
// in GCC 13); the intrinsics overwrite them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {

// Text scanned for separators before its fields are parsed: the field ends of 4 KiB fit a
// buffer on the stack, and the loops over them run long enough to be predicted.
constexpr int region_bytes = 4096;

// Byte 15 of every lane: where each field's separator sits.
constexpr std::uint64_t separator_bytes = 0x8000800080008000ULL;

// The offsets from `begin` of every ',' and '\n' in [from, to), whose length is a multiple of 64;
// returns how many. Writes up to 16 entries past that count.
HALO_AVX512_TARGET int find_separators(const char* begin, const char* from, const char* to, std::uint32_t* out) {
  const __m512i offsets = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  int n = 0;
  for (const char* p = from; p < to; p += 64) {
    _mm_prefetch(std::min(p + 1024, to - 64), _MM_HINT_T0);
    const __m512i bytes = _mm512_loadu_si512(p);
    const std::uint64_t found =
        _mm512_cmpeq_epi8_mask(bytes, _mm512_set1_epi8('\n')) | _mm512_cmpeq_epi8_mask(bytes, _mm512_set1_epi8(','));
    const __m512i at = _mm512_add_epi32(offsets, _mm512_set1_epi32(static_cast<int>(p - begin)));
    for (int q = 0; q < 4; ++q) {
      const auto quarter = static_cast<__mmask16>(found >> (16 * q));
      _mm512_storeu_si512(out + n, _mm512_maskz_compress_epi32(quarter, _mm512_add_epi32(at, _mm512_set1_epi32(16 * q))));
      n += __builtin_popcount(quarter);
    }
  }
  return n;
}

// The constants of the four-field steps.
struct LaneConstants {
  __m512i newline, zero, ten, dot, minus, lane_offsets, fourteen, fifteen, one, sign_byte, dword_lanes, even_qwords;
  __m512i tens, hundreds, ten_thousands, hundred_millions;
  __m512d powers_low, powers_high;
  __m256i low29, float_midpoint, sign_bit;
  __m128i one_dword, fifteen_dwords;

  HALO_AVX512_TARGET LaneConstants() {
    static constexpr double powers[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                          1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    newline = _mm512_set1_epi8('\n');
    zero = _mm512_set1_epi8('0');
    ten = _mm512_set1_epi8(10);
    dot = _mm512_set1_epi8('.');
    minus = _mm512_set1_epi8('-');
    lane_offsets = _mm512_set4_epi32(0x0f0e0d0c, 0x0b0a0908, 0x07060504, 0x03020100);
    fourteen = _mm512_set1_epi8(14);
    fifteen = _mm512_set1_epi8(15);
    one = _mm512_set1_epi8(1);
    sign_byte = _mm512_set1_epi8(static_cast<char>(0x80));
    dword_lanes = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    even_qwords = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    tens = _mm512_set1_epi16(0x010A);
    hundreds = _mm512_set1_epi32(0x00010064);
    ten_thousands = _mm512_set1_epi32(0x00012710);
    hundred_millions = _mm512_set1_epi64(100000000);
    powers_low = _mm512_loadu_pd(powers);
    powers_high = _mm512_loadu_pd(powers + 8);
    low29 = _mm256_set1_epi64x(0x1fffffff);
    float_midpoint = _mm256_set1_epi64x(0x10000000);
    sign_bit = _mm256_set1_epi64x(static_cast<long long>(0x8000000000000000ULL));
    one_dword = _mm_set1_epi32(1);
    fifteen_dwords = _mm_set1_epi32(15);
    // Left as known values, GCC rebuilds each constant from an immediate inside the loop (two
    // instructions apiece, 10 % of the time); hidden behind empty asm they stay in registers.
    __asm__("" : "+v"(newline), "+v"(zero), "+v"(ten), "+v"(dot), "+v"(minus), "+v"(lane_offsets), "+v"(fourteen));
    __asm__("" : "+v"(fifteen), "+v"(one), "+v"(sign_byte), "+v"(dword_lanes), "+v"(even_qwords), "+v"(tens));
    __asm__("" : "+v"(hundreds), "+v"(ten_thousands), "+v"(hundred_millions), "+v"(powers_low), "+v"(powers_high));
    __asm__("" : "+v"(low29), "+v"(float_midpoint), "+v"(sign_bit), "+v"(one_dword), "+v"(fifteen_dwords));
  }
};

// Four consecutive fields, field i right-aligned in lane i.
struct FourFields {
  __m512i text;          // lane i: the 15 bytes before separator i, then separator i
  __m512i digits;        // text - '0' in every byte
  __mmask64 field;       // the bytes of each lane's field
  __mmask64 first;       // the first byte of each lane's field
  __mmask64 is_digit;    // the bytes that are '0'..'9'
  unsigned line_ends;    // bit i: separator i is '\n'
  bool fits;             // every field is 1 to 15 bytes long
};

// ends[-1..3]: the offsets of the separator before the four fields and of theirs. ends[0] >= 15.
HALO_AVX512_TARGET __attribute__((always_inline)) inline FourFields load_four_fields(const char* begin,
                                                                                      const std::uint32_t* ends,
                                                                                      const LaneConstants& k) {
  FourFields f;
  const __m128i length = _mm_sub_epi32(
      _mm_sub_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ends)),
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(ends - 1))),
      k.one_dword);
  __m512i text = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(begin + ends[0] - 15)));
  text = _mm512_inserti32x4(text, _mm_loadu_si128(reinterpret_cast<const __m128i*>(begin + ends[1] - 15)), 1);
  text = _mm512_inserti32x4(text, _mm_loadu_si128(reinterpret_cast<const __m128i*>(begin + ends[2] - 15)), 2);
  text = _mm512_inserti32x4(text, _mm_loadu_si128(reinterpret_cast<const __m128i*>(begin + ends[3] - 15)), 3);
  f.text = text;
  // Byte j of lane i belongs to field i when j + length_i >= 15 (and j < 15).
  const __m512i lane_length =
      _mm512_shuffle_epi8(_mm512_permutexvar_epi32(k.dword_lanes, _mm512_castsi128_si512(length)), _mm512_setzero_si512());
  const __m512i position = _mm512_add_epi8(k.lane_offsets, lane_length);
  f.field = _mm512_cmpgt_epi8_mask(position, k.fourteen) & ~separator_bytes;
  f.first = _mm512_cmpeq_epi8_mask(position, k.fifteen);
  f.line_ends = static_cast<unsigned>(_pext_u64(_mm512_cmpeq_epi8_mask(text, k.newline), separator_bytes));
  f.digits = _mm512_sub_epi8(text, k.zero);
  f.is_digit = _mm512_cmplt_epu8_mask(f.digits, k.ten);
  f.fits = (_mm_cmpgt_epi32_mask(length, k.fifteen_dwords) | _mm_cmpeq_epi32_mask(length, _mm_setzero_si128())) == 0;
  return f;
}

// The value of each lane's digit bytes (0 elsewhere, byte 15 the units, at most 15 digits), in
// qword i of the result: pairs, fours and eights by multiply-adds, then the two eights joined.
HALO_AVX512_TARGET __attribute__((always_inline)) inline __m256i lane_values(__m512i digit_bytes,
                                                                              const LaneConstants& k) {
  const __m512i pairs = _mm512_maddubs_epi16(digit_bytes, k.tens);
  const __m512i fours = _mm512_madd_epi16(pairs, k.hundreds);
  const __m512i eights = _mm512_madd_epi16(_mm512_packus_epi32(fours, fours), k.ten_thousands);
  const __m512i values = _mm512_add_epi64(_mm512_mul_epu32(eights, k.hundred_millions), _mm512_srli_epi64(eights, 32));
  return _mm512_castsi512_si256(_mm512_permutexvar_epi64(k.even_qwords, values));
}

// Four [-]d+.d+ fields as floats, each rounded as decimal_to_float rounds it (one IEEE division
// of two exact doubles, then to float); false, writing nothing, when a field has another shape
// or a value lands on a float midpoint.
HALO_AVX512_TARGET __attribute__((always_inline)) inline bool four_floats(const FourFields& f, const LaneConstants& k,
                                                                          float* out) {
  const __mmask64 dots = _mm512_mask_cmpeq_epi8_mask(f.field, f.text, k.dot);
  const __mmask64 minus = _mm512_mask_cmpeq_epi8_mask(f.first, f.text, k.minus);
  // Every byte of a field a digit, the leading '-', or its one '.' with a digit on each side (".5"
  // and "5." are left to the scalar reader).
  const __mmask64 bad = (f.field & ~(f.is_digit | dots | minus)) | (dots & ~(f.is_digit << 1)) | (dots & ~(f.is_digit >> 1));
  const __m512i dot_sums = _mm512_sad_epu8(_mm512_maskz_mov_epi8(dots, k.one), _mm512_setzero_si512());
  const __m512i dot_count = _mm512_add_epi64(dot_sums, _mm512_shuffle_epi32(dot_sums, _MM_PERM_BADC));
  if (!f.fits || bad != 0 || _mm512_cmpneq_epi64_mask(dot_count, _mm512_set1_epi64(1)) != 0) return false;
  // The fraction's digits stay, the whole part's move one byte up over the '.', and all move one
  // more so that the last digit is the units in byte 15.
  const std::uint64_t lane_ones = 0x0001000100010001ULL;
  const __mmask64 up_to_dot = (static_cast<std::uint64_t>(dots) << 1) - lane_ones;
  const __mmask64 body = f.field & ~minus;
  const __mmask64 fraction = body & ~up_to_dot;
  const __m512i digit_bytes = _mm512_maskz_mov_epi8(f.is_digit & body, f.digits);
  const __m512i aligned = _mm512_mask_mov_epi8(_mm512_bslli_epi128(digit_bytes, 2), fraction << 1,
                                               _mm512_bslli_epi128(digit_bytes, 1));
  const __m256i mantissa = lane_values(aligned, k);
  // One sum per lane: its fraction digits, plus 128 when negative.
  const __m512i sums = _mm512_sad_epu8(
      _mm512_or_si512(_mm512_maskz_mov_epi8(fraction, k.one), _mm512_maskz_mov_epi8(minus, k.sign_byte)),
      _mm512_setzero_si512());
  const __m512i paired = _mm512_permutexvar_epi64(k.even_qwords, sums);
  const __m256i scale_and_sign = _mm256_add_epi64(_mm512_castsi512_si256(paired), _mm512_extracti64x4_epi64(paired, 1));
  const __m256d power = _mm512_castpd512_pd256(
      _mm512_permutex2var_pd(k.powers_low, _mm512_castsi256_si512(scale_and_sign), k.powers_high));
  const __m256i quotient = _mm256_castpd_si256(_mm256_div_pd(_mm256_cvtepu64_pd(mantissa), power));
  // As in decimal_to_float: a double on a float midpoint is the one case rounding twice can miss.
  if (_mm256_cmpeq_epi64_mask(_mm256_and_si256(quotient, k.low29), k.float_midpoint) != 0) return false;
  // Bit 7 of the sum, moved to bit 63, is the sign (-0.0 stays negative, as from_chars gives it).
  const __m256i with_sign = _mm256_ternarylogic_epi64(quotient, _mm256_slli_epi64(scale_and_sign, 56), k.sign_bit, 0x78);
  _mm_storeu_ps(out, _mm256_cvtpd_ps(_mm256_castsi256_pd(with_sign)));
  return true;
}

// Four fields of digits as integers (in qword i), each below its limit; false when a field has
// another shape or a value reaches its limit.
HALO_AVX512_TARGET __attribute__((always_inline)) inline bool four_ids(const FourFields& f, const LaneConstants& k,
                                                                       __m256i limits, __m256i& values) {
  if (!f.fits || (f.field & ~f.is_digit) != 0) return false;
  values = lane_values(_mm512_bslli_epi128(_mm512_maskz_mov_epi8(f.field, f.digits), 1), k);
  return _mm256_cmpge_epi64_mask(values, limits) == 0;  // values < 2^53: signed, as the scalar check
}

// The floats of a run: field index g goes to out[g].
struct FloatRows {
  float* out;

  HALO_AVX512_TARGET __attribute__((always_inline)) bool four(const FourFields& f, const LaneConstants& k,
                                                              std::int64_t, std::int64_t, std::int64_t g) const {
    return four_floats(f, k, out + g);
  }
  bool one(const char* readable, const char* s, const char* e, std::int64_t, std::int64_t, std::int64_t g) const {
    return fast_float_field(readable, s, e, out[g]);
  }
};

// The ids of a run: field c of line k goes to columns[c][k] when below limits[c].
template <class I>
struct IdRows {
  std::int64_t cols;
  const std::int64_t* limits;
  I* const* columns;
  std::vector<std::int64_t> lane_limits;  // per starting column c: the limits of columns c .. c+3 (mod cols)

  IdRows(std::int64_t num_cols, const std::int64_t* column_limits, I* const* outputs)
      : cols(num_cols), limits(column_limits), columns(outputs) {
    for (std::int64_t c = 0; c < cols; ++c)
      for (std::int64_t i = 0; i < 4; ++i) lane_limits.push_back(limits[(c + i) % cols]);
  }

  HALO_AVX512_TARGET __attribute__((always_inline)) bool four(const FourFields& f, const LaneConstants& k,
                                                              std::int64_t c, std::int64_t line, std::int64_t) const {
    __m256i values;
    const __m256i limit = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lane_limits.data() + 4 * c));
    if (!four_ids(f, k, limit, values)) return false;
    if (cols == 2 && c == 0) {
      // Lines `line` and `line + 1`, both columns: qwords a0 b0 a1 b1.
      const __m256i by_column = _mm256_permute4x64_epi64(values, 0xD8);
      store_pair(columns[0] + line, _mm256_castsi256_si128(by_column));
      store_pair(columns[1] + line, _mm256_extracti128_si256(by_column, 1));
      return true;
    }
    alignas(32) std::uint64_t v[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(v), values);
    for (std::int64_t i = 0; i < 4; ++i) columns[(c + i) % cols][line + (c + i) / cols] = static_cast<I>(v[i]);
    return true;
  }
  bool one(const char* readable, const char* s, const char* e, std::int64_t c, std::int64_t line, std::int64_t) const {
    std::int64_t v = 0;
    if (!fast_id_field(readable, s, e, v) || v >= limits[c]) return false;
    columns[c][line] = static_cast<I>(v);
    return true;
  }
  // Two values (qwords) to two consecutive entries.
  HALO_AVX512_TARGET static void store_pair(I* to, __m128i pair) {
    if constexpr (sizeof(I) == 4)
      _mm_storel_epi64(reinterpret_cast<__m128i*>(to), _mm_shuffle_epi32(pair, 0x08));
    else
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to), pair);
  }
};

// The run of parse_plain_lines, with Rows reading four fields at a time (rows.four) or one
// (rows.one).
template <class Rows>
HALO_AVX512_TARGET PlainLines read_rows(const char* begin, const char* end, std::int64_t max_lines, std::int64_t cols,
                                        const Rows& rows) {
  if (cols <= 0 || max_lines <= 0) return {0, begin};
  // Field ends are 32-bit offsets from `begin`; a longer text (a block grown around one line of
  // 4 GiB) goes to the SSE2 walker with the same field readers.
  if (end - begin > std::ptrdiff_t{0xffffff00})
    return parse_plain_lines(begin, end, max_lines, cols, [&](std::int64_t k, std::int64_t c, const char* s, const char* e) {
      return rows.one(begin, s, e, c, k, k * cols + c);
    });
  // Per starting column: which of four fields end a line, and the column after them.
  std::vector<unsigned> line_ends(static_cast<std::size_t>(cols));
  std::vector<std::int64_t> after(static_cast<std::size_t>(cols));
  for (std::int64_t c = 0; c < cols; ++c) {
    for (std::int64_t i = 0; i < 4; ++i) line_ends[static_cast<std::size_t>(c)] |= ((c + i) % cols == cols - 1) << i;
    after[static_cast<std::size_t>(c)] = (c + 4) % cols;
  }
  const LaneConstants k;
  // ends[-1] is the separator before the next field; "before the text" is -1, so that the first
  // field starts at offset 0.
  alignas(64) std::uint32_t buffer[16 + region_bytes + 32];
  std::uint32_t* ends = buffer + 16;
  ends[-1] = ~std::uint32_t{0};
  int held = 0;  // ends not yet read, at ends[0 .. held)
  std::int64_t col = 0, line = 0, g = 0;
  const char* line_start = begin;
  // One field, ending at begin + *e; false when the run ends.
  const auto one = [&](const std::uint32_t* e) {
    const char* s = begin + static_cast<std::uint32_t>(e[-1] + 1);
    const char* sep = begin + *e;
    if (!rows.one(begin, s, sep, col, line, g)) return false;
    ++g;
    if (*sep == '\n') {
      if (col != cols - 1) return false;
      col = 0;
      line_start = sep + 1;
      return ++line < max_lines;
    }
    return ++col < cols;
  };
  const char* scan_end = begin + ((end - begin) & ~std::ptrdiff_t{63});
  for (const char* from = begin; from < scan_end;) {
    const char* to = std::min(scan_end, from + region_bytes);
    held += find_separators(begin, from, to, ends + held);
    from = to;
    int done = 0;
    for (; held - done >= 4; done += 4) {
      const std::uint32_t* e = ends + done;
      bool taken = false;
      if (line + 4 < max_lines && e[0] >= 15) {
        const FourFields f = load_four_fields(begin, e, k);
        const unsigned expected = line_ends[static_cast<std::size_t>(col)];
        taken = f.line_ends == expected && rows.four(f, k, col, line, g);
        if (taken) {
          g += 4;
          col = after[static_cast<std::size_t>(col)];
          if (expected != 0) {
            line += __builtin_popcount(expected);
            line_start = begin + e[31 - __builtin_clz(expected)] + 1;
          }
        }
      }
      if (!taken)
        for (int i = 0; i < 4; ++i)
          if (!one(e + i)) return {line, line_start};
    }
    if (done > 0) {
      ends[-1] = ends[done - 1];
      std::copy(ends + done, ends + held, ends);
      held -= done;
    }
  }
  for (int i = 0; i < held; ++i)
    if (!one(ends + i)) break;
  return {line, line_start};
}

}  // namespace

PlainLines parse_float_rows_avx512(const char* begin, const char* end, std::int64_t max_lines, std::int64_t cols,
                                   float* out) {
  return read_rows(begin, end, max_lines, cols, FloatRows{out});
}

template <class I>
PlainLines parse_id_rows_avx512(const char* begin, const char* end, std::int64_t max_lines, std::int64_t cols,
                                const std::int64_t* limits, I* const* columns) {
  return read_rows(begin, end, max_lines, cols, IdRows<I>(cols, limits, columns));
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

bool avx512_rows_supported() {
  static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                                __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
                                __builtin_cpu_supports("popcnt");
  return supported;
}

#else

bool avx512_rows_supported() { return false; }

PlainLines parse_float_rows_avx512(const char* begin, const char*, std::int64_t, std::int64_t, float*) {
  return {0, begin};
}

template <class I>
PlainLines parse_id_rows_avx512(const char* begin, const char*, std::int64_t, std::int64_t, const std::int64_t*,
                                I* const*) {
  return {0, begin};
}

#endif

template PlainLines parse_id_rows_avx512<std::int32_t>(const char*, const char*, std::int64_t, std::int64_t,
                                                       const std::int64_t*, std::int32_t* const*);
template PlainLines parse_id_rows_avx512<std::int64_t>(const char*, const char*, std::int64_t, std::int64_t,
                                                       const std::int64_t*, std::int64_t* const*);

}  // namespace halo::datasets::detail
