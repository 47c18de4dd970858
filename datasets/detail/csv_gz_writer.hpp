// Parallel writer of gzip-compressed CSV files: rows are formatted and compressed in chunks on
// all threads, each chunk as an independent gzip member, and the members are concatenated in
// order into one valid gzip file (zlib's gzread, `gzip -d`, Python's gzip and pandas read all
// members). The writing half of write_ogb (datasets/ogb_writer.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace halo::datasets::detail {

// Appends the text of rows [begin, end) to `out`, each row ending in '\n'.
using RowFormatter = std::function<void(std::int64_t begin, std::int64_t end, std::string& out)>;

// Writes rows [0, num_rows) to the new file `path` as gzip members of `chunk_rows` rows each
// (one empty member when num_rows is 0). Chunks are formatted and compressed a batch at a time
// in parallel and appended in order, so memory stays at a few chunks per thread and the bytes
// depend only on the rows, chunk_rows and level — never on the thread count. level: zlib's
// 0 (stored) to 9. Throws IoError naming `path`.
void write_csv_gz(const std::string& path, std::int64_t num_rows, std::int64_t chunk_rows, int level,
                  const RowFormatter& format);

// A small text written as a single gzip member.
void write_text_gz(const std::string& path, std::string_view text, int level);

// Rows per chunk so that a chunk holds about `target_bytes` of text (at least one row).
std::int64_t chunk_rows_for(std::int64_t bytes_per_row, std::int64_t target_bytes = std::int64_t{1} << 20);

// One gzip member (RFC 1952) holding `text`, with mtime 0, no file name and OS 255 (unknown), as
// Python's gzip module writes with mtime=0, so the bytes depend on nothing but the input.
std::string gzip_member(std::string_view text, int level);

// Decimal integer.
void append_int(std::string& out, std::int64_t value);
// The shortest decimal that reads back as exactly `value` (std::to_chars), e.g. "0.1", "1e-05".
void append_float(std::string& out, float value);

}  // namespace halo::datasets::detail
