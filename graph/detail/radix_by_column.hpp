// Internal to graph/: the stable LSD radix sort by column that lets csr_from_coo's last pass
// deliver rows already sorted by column (a stable scatter by row of a column-sorted list),
// instead of sorting every row of an unsorted edge list on its own.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace halo::graph::detail {

// Bits needed to write every column below num_cols.
inline int column_bits(std::int64_t num_cols) {
  int bits = 0;
  while (bits < 63 && (std::int64_t{1} << bits) < num_cols) ++bits;
  return bits;
}

// Arrays of one list of (column, row, weight) triples; weights is nullptr when unweighted.
template <class O, class R>
struct ColumnRowList {
  O* cols;
  R* rows;
  float* weights;
};

// Sorts the n triples of `a` stably by column (each below 2^bits) in passes of at most 11 bits
// (2048 counters a pass, all counted in one read of the columns first), ping-ponging with the
// same-sized arrays of `b`. Returns whichever of the two holds the sorted list. Cost: one read of
// the columns, then ceil(bits / 11) passes of one read and one scattered write of the triples;
// deterministic.
template <class O, class R>
ColumnRowList<O, R> radix_sort_by_column(std::int64_t n, ColumnRowList<O, R> a, ColumnRowList<O, R> b, int bits,
                                         std::vector<std::int64_t>& count) {
  constexpr int max_digit_bits = 11;
  const int passes = (bits + max_digit_bits - 1) / max_digit_bits;
  if (passes == 0) return a;
  const int digit_bits = (bits + passes - 1) / passes;
  const auto digits = std::size_t{1} << digit_bits;
  const auto mask = static_cast<std::uint64_t>(digits - 1);
  count.assign(digits * static_cast<std::size_t>(passes), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto col = static_cast<std::uint64_t>(a.cols[i]);
    for (int pass = 0; pass < passes; ++pass) ++count[pass * digits + ((col >> (pass * digit_bits)) & mask)];
  }
  for (int pass = 0; pass < passes; ++pass) {
    std::int64_t* pass_count = count.data() + pass * digits;
    std::int64_t run = 0;
    for (std::size_t d = 0; d < digits; ++d) run += std::exchange(pass_count[d], run);
    const int shift = pass * digit_bits;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t pos = pass_count[(static_cast<std::uint64_t>(a.cols[i]) >> shift) & mask]++;
      b.cols[pos] = a.cols[i];
      b.rows[pos] = a.rows[i];
      if (a.weights != nullptr) b.weights[pos] = a.weights[i];
    }
    std::swap(a, b);
  }
  return a;
}

}  // namespace halo::graph::detail
