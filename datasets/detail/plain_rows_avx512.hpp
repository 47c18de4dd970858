// The numeric CSV readers' fast path (detail/plain_csv_lines.hpp) for CPUs with AVX-512: the
// separators of 4 KiB of text are found at a time, then four fields per step are parsed side by
// side, one in each 128-bit lane of a 512-bit register. Same values and the same stopping rule
// as parse_plain_lines with fast_float_field / fast_id_field; chosen at run time, so the build
// itself stays generic x86-64.
#pragma once

#include <cstdint>

#include "datasets/detail/plain_csv_lines.hpp"

namespace halo::datasets::detail {

// Whether this CPU runs the two readers below (AVX-512 F, BW, DQ and VL, and BMI2). Checked once.
bool avx512_rows_supported();

// What parse_plain_lines(begin, end, max_lines, cols, field) gives when field(k, c, s, e) is
// fast_float_field(begin, s, e, out[k * cols + c]): up to max_lines lines of exactly `cols`
// fields, the run ending at the first line with a field that reader declines, the wrong field
// count, or a '\n' in the tail of fewer than 64 bytes left by 64-byte steps from `begin`; that
// line's fields may have been written. Only call when avx512_rows_supported(). Cost: one pass
// over the text, about 3 ns a field; deterministic.
PlainLines parse_float_rows_avx512(const char* begin, const char* end, std::int64_t max_lines, std::int64_t cols,
                                   float* out);

// Likewise for ids: field c of line k is fast_id_field's value, below limits[c], written to
// columns[c][k]; a value at or above its limit ends the run. I is int32_t or int64_t; every limit
// must fit I.
template <class I>
PlainLines parse_id_rows_avx512(const char* begin, const char* end, std::int64_t max_lines, std::int64_t cols,
                                const std::int64_t* limits, I* const* columns);

}  // namespace halo::datasets::detail
