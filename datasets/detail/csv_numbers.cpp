// The block-parallel CSV number parser: LineBlockReader hands out blocks of whole lines with
// their line numbers, so every thread knows the row its block starts at and writes its values
// straight into the preallocated result.
#include "datasets/detail/csv_numbers.hpp"

#include <atomic>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <system_error>
#include <utility>

#include "datasets/detail/line_blocks.hpp"
#include "datasets/detail/parse_number.hpp"
#include "datasets/detail/plain_csv_lines.hpp"
#include "datasets/detail/plain_rows_avx512.hpp"
#include "datasets/detail/read_priority.hpp"
#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"
#include "graph/base/progress.hpp"

namespace halo::datasets::detail {

namespace {

// Keeps the error on the smallest line, so the report does not depend on thread timing.
class FirstError {
 public:
  std::int64_t line() const { return line_.load(std::memory_order_relaxed); }
  void capture() {
    std::int64_t line = 0;  // errors without a line (I/O, allocation) win
    try {
      throw;
    } catch (const IoError& e) {
      line = e.line();
    } catch (...) {
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_ || line < line_.load()) {
      error_ = std::current_exception();
      line_.store(line);
    }
  }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
  std::atomic<std::int64_t> line_{std::numeric_limits<std::int64_t>::max()};
};

// Runs fn(block) on every block on all threads; rethrows the error on the smallest line.
// Reports progress in rows (`rows` < 0: total unknown) through the logger. Ends early with
// Error when `stop` becomes true before the last block is handed out.
template <class Fn>
void for_each_block(LineBlockReader& reader, std::int64_t rows, Fn&& fn, const std::atomic<bool>* stop = nullptr) {
  Progress progress("reading " + reader.path(), rows);
  FirstError first;
  std::atomic<bool> stopped{false};
  // On a read's own thread the parsers give way to the read's critical decoder.
  const bool lower = in_read_thread();
  parallel_for_each_thread(0, max_threads(), [&](int, int, std::int64_t, std::int64_t) {
    if (lower) lower_thread_priority();
    for (;;) {
      LineBlock* block = nullptr;
      try {
        block = reader.next();
      } catch (...) {
        first.capture();
        reader.cancel();
        return;
      }
      if (!block) return;
      if (stop && stop->load(std::memory_order_relaxed)) {
        reader.release(block);
        reader.cancel();
        stopped = true;
        return;
      }
      // Blocks past a known error cannot change the report; blocks before it still can.
      if (block->first_line < first.line()) {
        try {
          fn(*block);
          progress.advance(block->num_lines);
        } catch (...) {
          first.capture();
          reader.cancel();
        }
      }
      reader.release(block);
    }
  });
  first.rethrow();
  if (stopped) throw Error("reading " + reader.path() + " stopped before its end");
}

bool is_line_end(const char* p, const char* end) { return p == end || *p == '\n' || *p == '\r'; }
bool is_field_end(const char* p, const char* end) { return is_line_end(p, end) || *p == ','; }

// The text of the field starting at p, shortened for messages.
std::string field_text(const char* p, const char* end) {
  const char* q = p;
  while (!is_field_end(q, end)) ++q;
  std::string text(p, q);
  if (text.size() > 40) text = text.substr(0, 40) + "...";
  return text;
}

std::int64_t count_fields(const char* line_begin, const char* end) {
  std::int64_t fields = 1;
  for (const char* q = line_begin; !is_line_end(q, end); ++q) fields += *q == ',';
  return fields;
}

[[noreturn]] void throw_field_count(const std::string& path, std::int64_t line, const char* line_begin,
                                    const char* end, std::int64_t expected) {
  if (is_line_end(line_begin, end))
    throw IoError(path, line, "empty line, expected " + std::to_string(expected) + " comma-separated values");
  throw IoError(path, line, "has " + std::to_string(count_fields(line_begin, end)) + " fields, expected " +
                                std::to_string(expected));
}

[[noreturn]] void throw_bad_field(const std::string& path, std::int64_t line, std::int64_t col, const char* p,
                                  const char* end, const char* expected) {
  const std::string text = field_text(p, end);
  throw IoError(path, line, "field " + std::to_string(col + 1) + " is '" + text + "', expected " + expected);
}

// Parses `lines` lines of [p, end) starting at `first_line`, each with `cols` fields;
// field(p, end, col, line, k) parses field `col` of the k-th line and leaves p after it.
template <class Field>
void parse_lines(const std::string& path, const char* begin, const char* end, std::int64_t first_line,
                 std::int64_t lines, std::int64_t cols, Field&& field) {
  const char* p = begin;
  for (std::int64_t k = 0; k < lines; ++k) {
    const std::int64_t line = first_line + k;
    const char* line_begin = p;
    for (std::int64_t c = 0; c < cols; ++c) {
      if (c > 0) {
        if (p == end || *p != ',') throw_field_count(path, line, line_begin, end, cols);
        ++p;
      }
      field(p, end, c, line, k);
    }
    if (p != end && *p == '\r') ++p;
    if (p != end) {
      if (*p != '\n') throw_field_count(path, line, line_begin, end, cols);
      ++p;
    }
  }
}

// The rows of a block that the expected count allows; the next line is one too many.
std::int64_t allowed_rows(const LineBlock& b, const ExpectedRows& rows) {
  if (rows.rows < 0) return b.num_lines;
  const std::int64_t first_row = b.first_line - 1;
  return std::max<std::int64_t>(0, std::min(b.num_lines, rows.rows - first_row));
}

void check_no_extra_rows(const LineBlock& b, std::int64_t allowed, const ExpectedRows& rows, const std::string& path) {
  if (allowed < b.num_lines)
    throw IoError(path, b.first_line + allowed,
                  "more rows than the " + std::to_string(rows.rows) + " that " + rows.source + " gives");
}

void check_row_total(const LineBlockReader& reader, const ExpectedRows& rows) {
  const std::int64_t total = reader.total_lines();
  if (rows.rows >= 0 && total < rows.rows)
    throw IoError(reader.path(), total + 1,
                  "file ends after " + std::to_string(total) + " rows, but " + rows.source + " gives " +
                      std::to_string(rows.rows));
}

// Fields on line 1, which sets the width of a matrix file.
std::int64_t width_of(const LineBlockReader& reader, const ExpectedRows& rows) {
  const std::string_view line = reader.first_line();
  if (line.empty()) {
    if (rows.rows > 0) throw IoError(reader.path(), 1, "empty first line, expected comma-separated values");
    return 0;
  }
  std::int64_t fields = 1;
  for (char ch : line) fields += ch == ',';
  return fields;
}

[[noreturn]] __attribute__((noinline)) void throw_id_range(const std::string& path, std::int64_t line,
                                                           std::int64_t col, std::int64_t v, const IdColumn& column) {
  throw IoError(path, line,
                column.what + " " + std::to_string(v) + " (field " + std::to_string(col + 1) + ") is outside 0.." +
                    std::to_string(column.limit - 1) + " (" + column.limit_source + ")");
}

// One id field: an integer in [0, column.limit).
inline std::int64_t parse_id(const std::string& path, const char*& p, const char* end, std::int64_t col,
                             std::int64_t line, const IdColumn& column) {
  std::int64_t v = 0;
  const auto r = parse_int64(p, end, v);
  if (r.ec != std::errc() || !is_field_end(r.ptr, end)) throw_bad_field(path, line, col, p, end, "an integer id");
  if (v < 0 || v >= column.limit) throw_id_range(path, line, col, v, column);
  p = r.ptr;
  return v;
}

// The fast path over up to `lines` lines of a block: the AVX-512 readers where the CPU has them,
// else the SSE2 line walker; the same values and the same stopping line either way.
PlainLines fast_float_lines(const LineBlock& b, std::int64_t lines, std::int64_t cols, float* out) {
  if (avx512_rows_supported()) return parse_float_rows_avx512(b.begin(), b.end(), lines, cols, out);
  return parse_plain_lines(b.begin(), b.end(), lines, cols, [&](std::int64_t k, std::int64_t c, const char* s, const char* e) {
    return fast_float_field(b.begin(), s, e, out[k * cols + c]);
  });
}

// Likewise for ids: field c of line k below limits[c], to columns[c][k].
template <class I>
PlainLines fast_id_lines(const LineBlock& b, std::int64_t lines, const std::vector<std::int64_t>& limits,
                         const std::vector<I*>& columns) {
  const auto cols = static_cast<std::int64_t>(limits.size());
  if (avx512_rows_supported()) return parse_id_rows_avx512(b.begin(), b.end(), lines, cols, limits.data(), columns.data());
  return parse_plain_lines(b.begin(), b.end(), lines, cols, [&](std::int64_t k, std::int64_t c, const char* s, const char* e) {
    std::int64_t v = 0;
    if (!fast_id_field(b.begin(), s, e, v) || v >= limits[static_cast<std::size_t>(c)]) return false;
    columns[static_cast<std::size_t>(c)][k] = static_cast<I>(v);
    return true;
  });
}

}  // namespace

template <class I>
std::vector<Array<I>> read_id_columns(const std::string& path, const ExpectedRows& rows,
                                      const std::vector<IdColumn>& columns) {
  HALO_EXPECTS(rows.rows >= 0, "the row count of " + path + " must be known");
  for (const IdColumn& c : columns)
    HALO_EXPECTS(c.limit - 1 <= static_cast<std::int64_t>(std::numeric_limits<I>::max()),
                 "id limit " + std::to_string(c.limit) + " does not fit the index type");
  const std::int64_t cols = static_cast<std::int64_t>(columns.size());
  std::vector<Array<I>> out;
  std::vector<I*> dst;
  for (std::int64_t c = 0; c < cols; ++c) {
    out.push_back(Array<I>::vector(rows.rows));
    dst.push_back(out.back().data());
  }
  std::vector<std::int64_t> limits;
  for (const IdColumn& c : columns) limits.push_back(c.limit);
  LineBlockReader reader(path);
  for_each_block(reader, rows.rows, [&](const LineBlock& b) {
    const std::int64_t allowed = allowed_rows(b, rows);
    std::vector<I*> block_dst(dst.size());
    for (std::size_t c = 0; c < dst.size(); ++c) block_dst[c] = dst[c] + (b.first_line - 1);
    const PlainLines fast = fast_id_lines(b, allowed, limits, block_dst);
    const std::int64_t first_row = b.first_line - 1 + fast.lines;
    parse_lines(path, fast.next, b.end(), b.first_line + fast.lines, allowed - fast.lines, cols,
                [&](const char*& p, const char* end, std::int64_t c, std::int64_t line, std::int64_t k) {
                  dst[static_cast<std::size_t>(c)][first_row + k] =
                      static_cast<I>(parse_id(path, p, end, c, line, columns[static_cast<std::size_t>(c)]));
                });
    check_no_extra_rows(b, allowed, rows, path);
  });
  check_row_total(reader, rows);
  return out;
}

template std::vector<Array<std::int32_t>> read_id_columns<std::int32_t>(const std::string&, const ExpectedRows&,
                                                                        const std::vector<IdColumn>&);
template std::vector<Array<std::int64_t>> read_id_columns<std::int64_t>(const std::string&, const ExpectedRows&,
                                                                        const std::vector<IdColumn>&);

Array<std::int64_t> read_id_list(const std::string& path, const IdColumn& column) {
  // The length is unknown until the end: each block parses into its own piece, then the pieces
  // are concatenated in line order.
  std::mutex mutex;
  std::map<std::int64_t, std::vector<std::int64_t>> pieces;
  LineBlockReader reader(path);
  for_each_block(reader, -1, [&](const LineBlock& b) {
    std::vector<std::int64_t> ids(static_cast<std::size_t>(b.num_lines));
    parse_lines(path, b.begin(), b.end(), b.first_line, b.num_lines, 1,
                [&](const char*& p, const char* end, std::int64_t c, std::int64_t line, std::int64_t k) {
                  ids[static_cast<std::size_t>(k)] = parse_id(path, p, end, c, line, column);
                });
    std::lock_guard<std::mutex> lock(mutex);
    pieces.emplace(b.first_line, std::move(ids));
  });
  Array<std::int64_t> out = Array<std::int64_t>::vector(reader.total_lines());
  std::int64_t at = 0;
  for (const auto& [line, ids] : pieces) {
    std::copy(ids.begin(), ids.end(), out.data() + at);
    at += static_cast<std::int64_t>(ids.size());
  }
  HALO_ASSERT(at == out.size());
  return out;
}

Array<float> read_float_matrix(const std::string& path, const ExpectedRows& rows, const std::atomic<bool>* stop) {
  HALO_EXPECTS(rows.rows >= 0, "the row count of " + path + " must be known");
  LineBlockReader reader(path);
  const std::int64_t cols = width_of(reader, rows);
  Array<float> out = Array<float>::matrix(rows.rows, cols);
  float* x = out.data();
  for_each_block(reader, rows.rows, [&](const LineBlock& b) {
    const std::int64_t allowed = allowed_rows(b, rows);
    float* first = x + (b.first_line - 1) * cols;
    const PlainLines fast = fast_float_lines(b, allowed, cols, first);
    float* row0 = x + (b.first_line - 1 + fast.lines) * cols;
    parse_lines(path, fast.next, b.end(), b.first_line + fast.lines, allowed - fast.lines, cols,
                [&](const char*& p, const char* end, std::int64_t c, std::int64_t line, std::int64_t k) {
                  float v = 0;
                  const char* q = (p != end && *p == '+') ? p + 1 : p;
                  const auto r = parse_float(q, end, v);
                  if (r.ec == std::errc::result_out_of_range)
                    throw_bad_field(path, line, c, p, end, "a number within float32 range");
                  if (r.ec != std::errc() || !is_field_end(r.ptr, end)) throw_bad_field(path, line, c, p, end, "a number");
                  if (!std::isfinite(v)) throw_bad_field(path, line, c, p, end, "a finite number (features must be finite)");
                  row0[k * cols + c] = v;
                  p = r.ptr;
                });
    check_no_extra_rows(b, allowed, rows, path);
  }, stop);
  check_row_total(reader, rows);
  return out;
}

Array<std::int64_t> read_label_matrix(const std::string& path, const ExpectedRows& rows, const LabelSpec& spec) {
  HALO_EXPECTS(rows.rows >= 0, "the row count of " + path + " must be known");
  LineBlockReader reader(path);
  const std::int64_t cols = spec.columns >= 0 ? spec.columns : width_of(reader, rows);
  Array<std::int64_t> out = Array<std::int64_t>::matrix(rows.rows, cols);
  std::int64_t* y = out.data();
  for_each_block(reader, rows.rows, [&](const LineBlock& b) {
    const std::int64_t allowed = allowed_rows(b, rows);
    std::int64_t* row0 = y + (b.first_line - 1) * cols;
    parse_lines(path, b.begin(), b.end(), b.first_line, allowed, cols,
                [&](const char*& p, const char* end, std::int64_t c, std::int64_t line, std::int64_t k) {
                  std::int64_t v = 0;
                  auto r = parse_int64(p, end, v);
                  if (r.ec != std::errc() || !is_field_end(r.ptr, end)) {
                    // pandas writes a label column holding NaN as floats: "3.0", "" or "nan".
                    double d = 0;
                    const auto rd = std::from_chars(p, end, d);
                    if (is_field_end(p, end)) {
                      v = -1;
                      r.ptr = p;
                    } else if (rd.ec == std::errc() && is_field_end(rd.ptr, end) && std::isnan(d)) {
                      v = -1;
                      r.ptr = rd.ptr;
                    } else if (rd.ec == std::errc() && is_field_end(rd.ptr, end) && std::abs(d) < 9e15 &&
                               d == std::floor(d)) {
                      v = static_cast<std::int64_t>(d);
                      r.ptr = rd.ptr;
                    } else {
                      throw_bad_field(path, line, c, p, end, "an integer label (or NaN for none)");
                    }
                  }
                  if (v < -1 || (spec.limit >= 0 && v >= spec.limit))
                    throw IoError(path, line,
                                  "label " + std::to_string(v) + " (field " + std::to_string(c + 1) + ") is outside " +
                                      (spec.limit >= 0 ? "0.." + std::to_string(spec.limit - 1) : std::string("0..")) +
                                      " and is not -1 (unlabelled)" +
                                      (spec.limit_source.empty() ? std::string() : "; " + spec.limit_source));
                  row0[k * cols + c] = v;
                  p = r.ptr;
                });
    check_no_extra_rows(b, allowed, rows, path);
  });
  check_row_total(reader, rows);
  return out;
}

}  // namespace halo::datasets::detail
