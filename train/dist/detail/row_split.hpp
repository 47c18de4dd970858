// The rows of a part's operators, cut so that HaloAggregation can multiply while the halo rows
// travel: A's rows split by whether they read a halo column, and a row range of Aᵀ. Both keep
// every row's entries whole and in order, so the pieces' products add each row's terms exactly
// as the whole operator's product does.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/array.hpp"
#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"
#include "graph/csr.hpp"

namespace halo::train::dist::detail {

struct RowSplit {
  graph::CsrGraph interior;  // the rows whose columns all lie below first_halo (empty rows too)
  graph::CsrGraph boundary;  // the rows with a column >= first_halo
};

namespace row_split_impl {

// The rows of `a` where keep[r], whole and in order; the other rows empty. Same shape, index
// type and weights as `a`.
template <class I>
graph::CsrGraph kept_rows(const graph::CsrView<I>& a, const std::vector<unsigned char>& keep, bool sorted) {
  const std::int64_t n = a.num_rows;
  auto indptr = Array<std::int64_t>::vector(n + 1);
  indptr[0] = 0;
  for (std::int64_t r = 0; r < n; ++r)
    indptr[r + 1] = indptr[r] + (keep[static_cast<std::size_t>(r)] ? a.degree(r) : 0);
  const std::int64_t e = indptr[n];
  auto indices = Array<I>::vector(e);
  Array<float> weights = a.weights != nullptr ? Array<float>::vector(e) : Array<float>();
  parallel_for(
      0, n,
      [&](std::int64_t r) {
        if (!keep[static_cast<std::size_t>(r)]) return;
        const std::int64_t from = a.indptr[r];
        const std::int64_t to = indptr[r];
        for (std::int64_t k = 0; k < a.degree(r); ++k) indices[to + k] = a.indices[from + k];
        if (a.weights != nullptr)
          for (std::int64_t k = 0; k < a.degree(r); ++k) weights[to + k] = a.weights[from + k];
      },
      1024);
  return graph::CsrGraph(n, a.num_cols, std::move(indptr), std::move(indices), std::move(weights), {sorted, false});
}

template <class I>
graph::CsrGraph row_range(const graph::CsrView<I>& a, std::int64_t begin, std::int64_t end, bool sorted) {
  const std::int64_t n = end - begin;
  const std::int64_t first = a.indptr[begin];
  auto indptr = Array<std::int64_t>::vector(n + 1);
  for (std::int64_t r = 0; r <= n; ++r) indptr[r] = a.indptr[begin + r] - first;
  const std::int64_t e = indptr[n];
  auto indices = Array<I>::vector(e);
  for (std::int64_t k = 0; k < e; ++k) indices[k] = a.indices[first + k];
  Array<float> weights = a.weights != nullptr ? Array<float>::vector(e) : Array<float>();
  if (a.weights != nullptr)
    for (std::int64_t k = 0; k < e; ++k) weights[k] = a.weights[first + k];
  return graph::CsrGraph(n, a.num_cols, std::move(indptr), std::move(indices), std::move(weights), {sorted, false});
}

}  // namespace row_split_impl

// Splits a's rows by their columns: a row goes whole to `interior` when every column is below
// first_halo, else whole to `boundary`; both are num_rows x num_cols with the other rows empty,
// a's index type and weights, and each row's entries in a's order. interior · x then needs only
// x's rows below first_halo, and interior · x + boundary · x (the second accumulated onto the
// first) is a · x term by term. O(rows + edges), parallel over rows; deterministic.
inline RowSplit split_rows_by_column(const graph::CsrGraph& a, std::int64_t first_halo) {
  HALO_EXPECTS(first_halo >= 0 && first_halo <= a.num_cols(),
               "split_rows_by_column: first_halo must lie in [0, " + std::to_string(a.num_cols()) + "], got " +
                   std::to_string(first_halo));
  return graph::visit(a, [&](const auto& v) {
    std::vector<unsigned char> boundary(static_cast<std::size_t>(v.num_rows), 0);
    parallel_for(
        0, v.num_rows,
        [&](std::int64_t r) {
          for (std::int64_t p = v.indptr[r]; p < v.indptr[r + 1]; ++p)
            if (static_cast<std::int64_t>(v.indices[p]) >= first_halo) {
              boundary[static_cast<std::size_t>(r)] = 1;
              break;
            }
        },
        1024);
    std::vector<unsigned char> interior(boundary.size());
    for (std::size_t r = 0; r < boundary.size(); ++r) interior[r] = boundary[r] ? 0 : 1;
    const bool sorted = a.properties().sorted;
    return RowSplit{row_split_impl::kept_rows(v, interior, sorted), row_split_impl::kept_rows(v, boundary, sorted)};
  });
}

// Rows [begin, end) of `a` as an (end - begin) x num_cols CSR: the same entries in the same
// order, a's index type and weights. O(end - begin + their edges); deterministic.
inline graph::CsrGraph row_range(const graph::CsrGraph& a, std::int64_t begin, std::int64_t end) {
  HALO_EXPECTS(begin >= 0 && begin <= end && end <= a.num_rows(),
               "row_range: [" + std::to_string(begin) + ", " + std::to_string(end) + ") is not a row range of a " +
                   std::to_string(a.num_rows()) + "-row CSR");
  const bool sorted = a.properties().sorted;
  return graph::visit(a, [&](const auto& v) { return row_split_impl::row_range(v, begin, end, sorted); });
}

}  // namespace halo::train::dist::detail
