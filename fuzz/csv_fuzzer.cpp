// libFuzzer target: OGB's numeric CSV files, plain or gzip (by their first two bytes), read as an
// edge list (two id columns), a float matrix and a label column, with the row count the input's
// line count (so every line is parsed).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "datasets/detail/csv_numbers.hpp"
#include "fuzz/fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace d = halo::datasets::detail;
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const std::string path = halo::fuzz::write_input(gzip ? "table.csv.gz" : "table.csv", data, size);
  const auto lines = static_cast<std::int64_t>(std::count(data, data + size, '\n'));
  const d::ExpectedRows rows{lines, "the input's line count"};
  halo::fuzz::expect_clean([&] {
    d::read_id_columns<std::int32_t>(path, rows, {{1000, "source vertex", "fuzz"}, {1000, "target vertex", "fuzz"}});
  });
  halo::fuzz::expect_clean([&] { d::read_float_matrix(path, rows); });
  halo::fuzz::expect_clean([&] { d::read_label_matrix(path, rows, {1, 40, "fuzz"}); });
  halo::fuzz::expect_clean([&] { d::read_id_list(path, {1000, "vertex", "fuzz"}); });
  return 0;
}
