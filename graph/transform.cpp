// Structural transforms of a CSR: transpose, degrees, self loops, and the GCN / mean edge weights.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graph/base/parallel.hpp"
#include "graph/build.hpp"
#include "graph/detail/coo_to_csr.hpp"

namespace halo::graph {
namespace {

// Row id of every edge (the COO row array of a CSR), as type I.
template <class I>
Array<I> expand_rows(const CsrGraph& g) {
  auto rows = Array<I>::vector(g.num_edges());
  const Array<std::int64_t>& indptr = g.indptr();
  parallel_for(
      0, g.num_rows(),
      [&](std::int64_t r) {
        for (std::int64_t p = indptr[r]; p < indptr[r + 1]; ++p) rows[p] = static_cast<I>(r);
      },
      1024);
  return rows;
}

template <class From, class To>
Array<To> widen(const Array<From>& a) {
  auto out = Array<To>::vector(a.size());
  parallel_for(0, a.size(), [&](std::int64_t i) { out[i] = static_cast<To>(a[i]); });
  return out;
}

void expect_square(const CsrGraph& g, const char* function) {
  if (g.num_rows() != g.num_cols())
    throw InvalidArgument(std::string(function) + ": needs a square graph, got " + std::to_string(g.num_rows()) +
                          " x " + std::to_string(g.num_cols()));
}

}  // namespace

CsrGraph transpose(const CsrGraph& g) {
  const float* weights = g.has_weights() ? g.weights().data() : nullptr;
  // The transpose's rows are g's columns: the COO (column, row) of g, sorted by column. Scanning g
  // row by row feeds each new row its entries in ascending order, so the per-row sort is a check.
  const bool narrow = g.index_type() == IndexType::i32 && index_type_for(g.num_rows()) == IndexType::i32;
  if (narrow) {
    const Array<std::int32_t> rows = expand_rows<std::int32_t>(g);
    return detail::sort_coo_by_row(g.num_cols(), g.num_rows(), g.indices<std::int32_t>().data(), rows.data(), weights,
                                   g.num_edges(), false, false, g.index_type(), g.properties().symmetric);
  }
  const Array<std::int64_t> rows = expand_rows<std::int64_t>(g);
  Array<std::int64_t> widened;
  if (g.index_type() == IndexType::i32) widened = widen<std::int32_t, std::int64_t>(g.indices<std::int32_t>());
  const std::int64_t* cols = g.index_type() == IndexType::i32 ? widened.data() : g.indices<std::int64_t>().data();
  return detail::sort_coo_by_row(g.num_cols(), g.num_rows(), cols, rows.data(), weights, g.num_edges(), false, false,
                                 g.index_type(), g.properties().symmetric);
}

CsrGraph select_rows(const CsrGraph& g, const std::int64_t* rows, std::int64_t count) {
  HALO_EXPECTS(count >= 0, "select_rows: negative row count " + std::to_string(count));
  for (std::int64_t i = 0; i < count; ++i)
    if (rows[i] < 0 || rows[i] >= g.num_rows())
      throw InvalidArgument("select_rows: row " + std::to_string(rows[i]) + " (entry " + std::to_string(i) +
                            ") is outside the graph's " + std::to_string(g.num_rows()) + " rows");
  const Array<std::int64_t>& from = g.indptr();
  auto indptr = Array<std::int64_t>::vector(count + 1);
  parallel_for(0, count, [&](std::int64_t i) { indptr[i] = from[rows[i] + 1] - from[rows[i]]; });
  indptr[count] = 0;
  exclusive_scan_in_place(indptr.data(), count + 1);
  const std::int64_t entries = indptr[count];
  Array<float> weights = g.has_weights() ? Array<float>::vector(entries) : Array<float>();
  CsrProperties props;
  props.sorted = g.properties().sorted;
  return visit(g, [&](auto v) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(v.indices)>>;
    auto indices = Array<I>::vector(entries);
    parallel_for(
        0, count,
        [&](std::int64_t i) {
          const std::int64_t source = from[rows[i]];
          std::copy(v.indices + source, v.indices + source + indptr[i + 1] - indptr[i], indices.data() + indptr[i]);
          if (v.weights != nullptr)
            std::copy(v.weights + source, v.weights + source + indptr[i + 1] - indptr[i], weights.data() + indptr[i]);
        },
        1024);
    return CsrGraph(count, g.num_cols(), std::move(indptr), std::move(indices), std::move(weights), props);
  });
}

Array<std::int64_t> row_degrees(const CsrGraph& g) {
  auto deg = Array<std::int64_t>::vector(g.num_rows());
  const Array<std::int64_t>& indptr = g.indptr();
  parallel_for(0, g.num_rows(), [&](std::int64_t r) { deg[r] = indptr[r + 1] - indptr[r]; });
  return deg;
}

Array<std::int64_t> column_degrees(const CsrGraph& g) {
  // A symmetric graph's column j holds as many entries as its row j: no histogram (about 1.3 CPU-s
  // on a products-scale graph on 2 cores).
  if (g.properties().symmetric) return row_degrees(g);
  return visit(g, [&](auto v) {
    // Per-thread histograms over contiguous edge shares, then summed column by column: no
    // atomics, and integer sums do not depend on the thread count.
    std::vector<std::vector<std::int64_t>> hist(static_cast<std::size_t>(max_threads()));
    int shares = 1;
    parallel_for_each_thread(0, v.num_edges, [&](int t, int threads, std::int64_t b, std::int64_t e) {
      if (t == 0) shares = threads;
      std::vector<std::int64_t>& count = hist[static_cast<std::size_t>(t)];
      count.assign(static_cast<std::size_t>(v.num_cols), 0);
      for (std::int64_t p = b; p < e; ++p) ++count[static_cast<std::size_t>(v.indices[p])];
    });
    auto deg = Array<std::int64_t>::vector(v.num_cols);
    parallel_for(0, v.num_cols, [&](std::int64_t c) {
      std::int64_t sum = 0;
      for (int t = 0; t < shares; ++t) sum += hist[static_cast<std::size_t>(t)][static_cast<std::size_t>(c)];
      deg[c] = sum;
    });
    return deg;
  });
}

CsrGraph with_self_loops(const CsrGraph& g) {
  expect_square(g, "with_self_loops");
  return detail::rebuild_rows(g, {false, true});
}

CsrGraph gcn_normalize(const CsrGraph& g) {
  expect_square(g, "gcn_normalize");
  CsrGraph a = detail::rebuild_rows(g, {false, true});
  const Array<std::int64_t>& indptr = a.indptr();
  const float* w = a.has_weights() ? a.weights().data() : nullptr;
  // d^-1/2 per row, summed in double; a row whose weights sum to 0 gets 0 rather than inf (as
  // PyG's gcn_norm does), so its entries become 0.
  std::vector<double> inv_sqrt(static_cast<std::size_t>(a.num_rows()));
  parallel_for(0, a.num_rows(), [&](std::int64_t r) {
    double d = 0.0;
    for (std::int64_t p = indptr[r]; p < indptr[r + 1]; ++p) d += w != nullptr ? w[p] : 1.0;
    inv_sqrt[static_cast<std::size_t>(r)] = d > 0.0 ? 1.0 / std::sqrt(d) : 0.0;
  });
  auto weights = Array<float>::vector(a.num_edges());
  visit(a, [&](auto v) {
    parallel_for(
        0, v.num_rows,
        [&](std::int64_t r) {
          const double dr = inv_sqrt[static_cast<std::size_t>(r)];
          for (std::int64_t p = v.indptr[r]; p < v.indptr[r + 1]; ++p) {
            const double a_rc = w != nullptr ? w[p] : 1.0;
            // dr * dc first: the product commutes exactly, so (r, c) and (c, r) of a symmetric
            // graph get bit-identical weights.
            weights[p] = static_cast<float>(a_rc * (dr * inv_sqrt[static_cast<std::size_t>(v.indices[p])]));
          }
        },
        1024);
  });
  return std::move(a).with_weights(std::move(weights));
}

CsrGraph mean_normalize(const CsrGraph& g) {
  const Array<std::int64_t>& indptr = g.indptr();
  auto weights = Array<float>::vector(g.num_edges());
  parallel_for(
      0, g.num_rows(),
      [&](std::int64_t r) {
        const std::int64_t n = indptr[r + 1] - indptr[r];
        for (std::int64_t p = indptr[r]; p < indptr[r + 1]; ++p) weights[p] = 1.0f / static_cast<float>(n);
      },
      1024);
  // 1/deg(i) on (i, j) and 1/deg(j) on (j, i) differ, so the symmetric claim does not survive.
  CsrProperties props = g.properties();
  props.symmetric = false;
  return visit(g, [&](auto v) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(v.indices)>>;
    return CsrGraph(g.num_rows(), g.num_cols(), g.indptr().clone(), g.indices<I>().clone(), std::move(weights), props);
  });
}

}  // namespace halo::graph
