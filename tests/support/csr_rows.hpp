// A CSR graph as plain sorted rows, for tests that compare a graph with a hand-drawn or naive one
// regardless of the order of the entries within a row.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/csr.hpp"

namespace halo::test {

using CsrRows = std::vector<std::vector<std::int64_t>>;

// Row r of the CSR: its column ids (the sources of the edges into r), sorted. Either index type.
inline CsrRows rows_of(const graph::CsrGraph& g) {
  CsrRows rows(static_cast<std::size_t>(g.num_rows()));
  graph::visit(g, [&](auto v) {
    for (std::int64_t r = 0; r < v.num_rows; ++r)
      for (std::int64_t k = v.indptr[r]; k < v.indptr[r + 1]; ++k)
        rows[static_cast<std::size_t>(r)].push_back(v.indices[k]);
  });
  for (auto& row : rows) std::sort(row.begin(), row.end());
  return rows;
}

}  // namespace halo::test
