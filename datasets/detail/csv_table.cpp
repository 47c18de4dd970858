// Small CSV tables: a quote-aware splitter and typed field accessors with line-numbered errors.
#include "datasets/detail/csv_table.hpp"

#include <charconv>
#include <system_error>

#include "datasets/detail/gzip_reader.hpp"
#include "graph/base/error.hpp"

namespace halo::datasets::detail {

CsvTable parse_csv_text(const std::string& text, const std::string& path) {
  CsvTable table;
  table.path = path;
  std::int64_t line = 1;
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const std::int64_t row_line = line;
    std::vector<std::string> fields(1);
    bool quoted = false;
    while (i < n && text[i] != '\n') {
      const char ch = text[i];
      if (ch == '"') {
        quoted = true;
        ++i;
        for (;;) {
          if (i >= n) throw IoError(path, row_line, "unterminated quoted field");
          if (text[i] == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              fields.back() += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (text[i] == '\n') ++line;
          fields.back() += text[i++];
        }
        continue;
      }
      if (ch == ',') {
        fields.emplace_back();
      } else if (ch != '\r') {
        fields.back() += ch;
      }
      ++i;
    }
    ++i;
    ++line;
    if (fields.size() == 1 && fields[0].empty() && !quoted) continue;  // a blank line
    table.rows.push_back(std::move(fields));
    table.lines.push_back(row_line);
  }
  return table;
}

CsvTable read_csv_table(const std::string& path) { return parse_csv_text(read_text_file(path), path); }

void CsvTable::expect_fields(std::size_t r, std::size_t fields) const {
  if (rows.at(r).size() != fields)
    throw IoError(path, lines.at(r),
                  "has " + std::to_string(rows[r].size()) + " fields, expected " + std::to_string(fields));
}

std::int64_t CsvTable::count(std::size_t r, std::size_t c) const {
  const std::string& s = rows.at(r).at(c);
  std::int64_t v = -1;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size() || v < 0)
    throw IoError(path, lines.at(r),
                  "field " + std::to_string(c + 1) + " is '" + s + "', expected a non-negative integer count");
  return v;
}

bool parse_flag(const std::string& text, bool& value) {
  if (text == "True" || text == "true" || text == "TRUE" || text == "1") {
    value = true;
    return true;
  }
  if (text == "False" || text == "false" || text == "FALSE" || text == "0") {
    value = false;
    return true;
  }
  return false;
}

bool CsvTable::flag(std::size_t r, std::size_t c) const {
  bool v = false;
  if (!parse_flag(rows.at(r).at(c), v))
    throw IoError(path, lines.at(r),
                  "field " + std::to_string(c + 1) + " is '" + rows[r][c] + "', expected True or False");
  return v;
}

}  // namespace halo::datasets::detail
