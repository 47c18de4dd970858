// Naive references for the graph builders and transforms: a std::map keyed on (row, column)
// stands in for the counting sort, and a dense matrix for the normalisations. Slow and obvious on
// purpose; tests compare the real code against them on random inputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "graph/csr.hpp"

namespace halo::test {

// A CSR as plain vectors, with every index widened to int64 and weights always present
// (1 for an unweighted graph), so graphs of either index type compare the same way.
struct NaiveCsr {
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int64_t> indices;
  std::vector<float> weights;
};

// A random COO edge list with ids in range, some repeated edges and self loops.
struct NaiveCoo {
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  std::vector<std::int64_t> rows;
  std::vector<std::int64_t> cols;
  std::vector<float> weights;  // one per edge, small integers / 4 so sums are exact
};

inline NaiveCoo random_coo(std::uint64_t seed, std::int64_t num_rows, std::int64_t num_cols, std::int64_t num_edges) {
  RandomStream rng(seed, 0);
  NaiveCoo coo;
  coo.num_rows = num_rows;
  coo.num_cols = num_cols;
  for (std::int64_t e = 0; e < num_edges; ++e) {
    std::int64_t r = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(num_rows)));
    std::int64_t c = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(num_cols)));
    const std::uint64_t kind = rng.below(10);
    if (kind == 0 && e > 0) {  // repeat an earlier edge
      const auto k = static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(e)));
      r = coo.rows[k];
      c = coo.cols[k];
    } else if (kind == 1 && r < num_cols) {
      c = r;  // self loop
    }
    coo.rows.push_back(r);
    coo.cols.push_back(c);
    coo.weights.push_back(static_cast<float>(1 + rng.below(16)) / 4.0f);
  }
  return coo;
}

// Entries filed under their (row, column), each cell holding the weights of its entries in order.
using NaiveCells = std::map<std::pair<std::int64_t, std::int64_t>, std::vector<float>>;

// The CSR that lists the cells in (row, column) order, each cell's entries in its order.
inline NaiveCsr naive_from_cells(std::int64_t num_rows, std::int64_t num_cols, const NaiveCells& cells) {
  NaiveCsr out;
  out.num_rows = num_rows;
  out.num_cols = num_cols;
  out.indptr.assign(static_cast<std::size_t>(num_rows) + 1, 0);
  for (const auto& cell : cells) {
    for (float w : cell.second) {
      out.indices.push_back(cell.first.second);
      out.weights.push_back(w);
    }
    out.indptr[static_cast<std::size_t>(cell.first.first) + 1] += static_cast<std::int64_t>(cell.second.size());
  }
  for (std::size_t r = 0; r < static_cast<std::size_t>(num_rows); ++r) out.indptr[r + 1] += out.indptr[r];
  return out;
}

// csr_from_coo by the definition: list the edges (and their reverses after them when
// symmetrising), file each under its (row, column) in input order, then apply the options.
inline NaiveCsr naive_csr_from_coo(const NaiveCoo& coo, const graph::CooToCsrOptions& options, bool weighted) {
  NaiveCells cells;
  const std::size_t m = coo.rows.size();
  for (int pass = 0; pass < (options.symmetrize ? 2 : 1); ++pass) {
    for (std::size_t e = 0; e < m; ++e) {
      const std::int64_t r = pass == 0 ? coo.rows[e] : coo.cols[e];
      const std::int64_t c = pass == 0 ? coo.cols[e] : coo.rows[e];
      if (options.drop_self_loops && r == c) continue;
      cells[{r, c}].push_back(weighted ? coo.weights[e] : 1.0f);
    }
  }
  if (options.drop_duplicates) {
    for (auto& cell : cells) {
      double sum = 0.0;
      for (float w : cell.second) sum += w;
      cell.second = {weighted ? static_cast<float>(sum) : 1.0f};
    }
  }
  if (options.add_self_loops)
    for (std::int64_t v = 0; v < std::min(coo.num_rows, coo.num_cols); ++v)
      if (cells.count({v, v}) == 0) cells[{v, v}] = {1.0f};
  return naive_from_cells(coo.num_rows, coo.num_cols, cells);
}

// The graph's arrays as a NaiveCsr.
inline NaiveCsr to_naive(const graph::CsrGraph& g) {
  NaiveCsr out;
  out.num_rows = g.num_rows();
  out.num_cols = g.num_cols();
  out.indptr = g.indptr().to_vector();
  graph::visit(g, [&](auto v) {
    for (std::int64_t e = 0; e < v.num_edges; ++e) {
      out.indices.push_back(static_cast<std::int64_t>(v.indices[e]));
      out.weights.push_back(v.weights != nullptr ? v.weights[e] : 1.0f);
    }
  });
  return out;
}

// "" when a and b hold the same graph (weights compared exactly), else the first difference.
inline std::string csr_difference(const NaiveCsr& a, const NaiveCsr& b) {
  if (a.num_rows != b.num_rows || a.num_cols != b.num_cols)
    return "shape " + std::to_string(a.num_rows) + " x " + std::to_string(a.num_cols) + " vs " +
           std::to_string(b.num_rows) + " x " + std::to_string(b.num_cols);
  for (std::size_t r = 0; r < a.indptr.size(); ++r)
    if (a.indptr[r] != b.indptr[r])
      return "indptr[" + std::to_string(r) + "] " + std::to_string(a.indptr[r]) + " vs " + std::to_string(b.indptr[r]);
  for (std::size_t e = 0; e < a.indices.size(); ++e) {
    if (a.indices[e] != b.indices[e])
      return "indices[" + std::to_string(e) + "] " + std::to_string(a.indices[e]) + " vs " +
             std::to_string(b.indices[e]);
    if (a.weights[e] != b.weights[e])
      return "weights[" + std::to_string(e) + "] " + std::to_string(a.weights[e]) + " vs " +
             std::to_string(b.weights[e]);
  }
  return {};
}

// The transpose by the definition: file every entry under (column, row) in row order.
inline NaiveCsr naive_transpose(const NaiveCsr& g) {
  NaiveCells cells;
  for (std::int64_t r = 0; r < g.num_rows; ++r)
    for (auto p = g.indptr[static_cast<std::size_t>(r)]; p < g.indptr[static_cast<std::size_t>(r) + 1]; ++p)
      cells[{g.indices[static_cast<std::size_t>(p)], r}].push_back(g.weights[static_cast<std::size_t>(p)]);
  return naive_from_cells(g.num_cols, g.num_rows, cells);
}

// Dense rows x cols matrix (row-major, doubles) with the weights of repeated entries added, and
// a matching mask of which cells hold at least one entry.
struct DenseMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<double> value;
  std::vector<bool> present;
  double at(std::int64_t r, std::int64_t c) const { return value[static_cast<std::size_t>(r * cols + c)]; }
  bool has(std::int64_t r, std::int64_t c) const { return present[static_cast<std::size_t>(r * cols + c)]; }
};

inline DenseMatrix to_dense(const NaiveCsr& g) {
  DenseMatrix d;
  d.rows = g.num_rows;
  d.cols = g.num_cols;
  d.value.assign(static_cast<std::size_t>(g.num_rows * g.num_cols), 0.0);
  d.present.assign(d.value.size(), false);
  for (std::int64_t r = 0; r < g.num_rows; ++r)
    for (auto p = g.indptr[static_cast<std::size_t>(r)]; p < g.indptr[static_cast<std::size_t>(r) + 1]; ++p) {
      const auto cell = static_cast<std::size_t>(r * g.num_cols + g.indices[static_cast<std::size_t>(p)]);
      d.value[cell] += g.weights[static_cast<std::size_t>(p)];
      d.present[cell] = true;
    }
  return d;
}

// Kipf & Welling's normalisation on a dense square matrix: a self loop of weight 1 where the
// diagonal holds no entry, then A[i][j] / sqrt(d_i d_j) with d the row sums (0 where d is 0).
inline DenseMatrix naive_gcn_normalize(DenseMatrix a) {
  for (std::int64_t v = 0; v < a.rows; ++v) {
    const auto cell = static_cast<std::size_t>(v * a.cols + v);
    if (!a.present[cell]) {
      a.value[cell] = 1.0;
      a.present[cell] = true;
    }
  }
  std::vector<double> d(static_cast<std::size_t>(a.rows), 0.0);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t c = 0; c < a.cols; ++c) d[static_cast<std::size_t>(r)] += a.at(r, c);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t c = 0; c < a.cols; ++c) {
      const double dr = d[static_cast<std::size_t>(r)], dc = d[static_cast<std::size_t>(c)];
      a.value[static_cast<std::size_t>(r * a.cols + c)] *= dr > 0 && dc > 0 ? 1.0 / std::sqrt(dr * dc) : 0.0;
    }
  return a;
}

}  // namespace halo::test
