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

// Sorts the n triples of `in` stably by column (each below 2^bits) in passes of at most 11 bits
// (2048 counters a pass, all counted in one read of the columns first). The first pass reads
// `in`, which is left as it was, and writes `a`; later ones go back and forth between `a` and `b`
// (same-sized arrays). Returns whichever of the three holds the sorted list (`in` when bits is 0).
// Cost: one read of the columns, then ceil(bits / 11) passes of one read and one scattered write
// of the triples; deterministic.
template <class O, class R>
ColumnRowList<O, R> radix_sort_by_column(std::int64_t n, ColumnRowList<O, R> in, ColumnRowList<O, R> a,
                                         ColumnRowList<O, R> b, int bits, std::vector<std::int64_t>& count) {
  constexpr int max_digit_bits = 11;
  const int passes = (bits + max_digit_bits - 1) / max_digit_bits;
  if (passes == 0) return in;
  const int digit_bits = (bits + passes - 1) / passes;
  const auto digits = std::size_t{1} << digit_bits;
  const auto mask = static_cast<std::uint64_t>(digits - 1);
  count.assign(digits * static_cast<std::size_t>(passes), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto col = static_cast<std::uint64_t>(in.cols[i]);
    for (int pass = 0; pass < passes; ++pass) ++count[pass * digits + ((col >> (pass * digit_bits)) & mask)];
  }
  ColumnRowList<O, R> from = in, to = a, spare = b;
  for (int pass = 0; pass < passes; ++pass) {
    std::int64_t* pass_count = count.data() + pass * digits;
    std::int64_t run = 0;
    for (std::size_t d = 0; d < digits; ++d) run += std::exchange(pass_count[d], run);
    const int shift = pass * digit_bits;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t pos = pass_count[(static_cast<std::uint64_t>(from.cols[i]) >> shift) & mask]++;
      to.cols[pos] = from.cols[i];
      to.rows[pos] = from.rows[i];
      if (from.weights != nullptr) to.weights[pos] = from.weights[i];
    }
    from = to;
    std::swap(to, spare);
  }
  return from;
}

}  // namespace halo::graph::detail
