// Small CSV files read whole into strings: OGB's metadata tables (master.csv, num-node-dict,
// nodetype-has-*, triplet-type-list, num-*-list). Fields may be double-quoted (pandas quotes a
// value holding a comma). Not for large files: see csv_numbers.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace halo::datasets::detail {

struct CsvTable {
  std::string path;                               // for messages
  std::vector<std::vector<std::string>> rows;     // every non-blank line, split into fields
  std::vector<std::int64_t> lines;                // 1-based line of each row

  // Throws IoError unless row r has exactly `fields` fields.
  void expect_fields(std::size_t r, std::size_t fields) const;
  // Field (r, c) as a count >= 0; throws IoError(path, line) naming the field otherwise.
  std::int64_t count(std::size_t r, std::size_t c) const;
  // Field (r, c) as a boolean ("True"/"False" as pandas writes them; also "true", "1", ...).
  bool flag(std::size_t r, std::size_t c) const;
};

// Splits CSV text into rows of fields (blank lines skipped). `path` only names the source in
// errors (an unterminated quote is an IoError).
CsvTable parse_csv_text(const std::string& text, const std::string& path);

// Reads a small (possibly gzipped) CSV file whole.
CsvTable read_csv_table(const std::string& path);

// "True" / "False" (and "true", "false", "1", "0"); false when `text` is none of these.
bool parse_flag(const std::string& text, bool& value);

}  // namespace halo::datasets::detail
