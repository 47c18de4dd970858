// validate(): the invariants of a CSR (offsets, column range, finite weights) and its claims
// (sorted rows, symmetry), and a heterogeneous graph's relation shapes.
#include "graph/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/base/parallel.hpp"
#include "graph/build.hpp"

namespace halo::graph {
namespace {

std::string str(std::int64_t x) { return std::to_string(x); }

// "row r, position p (edge e)" for the edge at offset e.
std::string where(const std::int64_t* indptr, std::int64_t num_rows, std::int64_t e) {
  const std::int64_t r = std::upper_bound(indptr, indptr + num_rows + 1, e) - indptr - 1;
  return "row " + str(r) + ", position " + str(e - indptr[r]) + " (edge " + str(e) + ")";
}

template <class I>
CsrViolation offsets_violation(const CsrView<I>& v) {
  const std::int64_t n = v.num_rows;
  const std::int64_t* indptr = v.indptr;
  if (indptr[0] != 0) return {CsrArray::indptr, "indptr[0] is " + str(indptr[0]) + ", expected 0"};
  const std::int64_t r = parallel_find_first(0, n, [&](std::int64_t i) { return indptr[i + 1] < indptr[i]; });
  if (r < n)
    return {CsrArray::indptr, "indptr decreases after row " + str(r) + ": indptr[" + str(r) + "] = " + str(indptr[r]) +
                                  " > indptr[" + str(r + 1) + "] = " + str(indptr[r + 1])};
  if (indptr[n] != v.num_edges)
    return {CsrArray::indptr, "indptr ends at " + str(indptr[n]) + ", expected the edge count " + str(v.num_edges)};
  return {};
}

// Needs valid offsets (to name the row of a bad entry).
template <class I>
CsrViolation entries_violation(const CsrView<I>& v) {
  const std::int64_t e = parallel_find_first(
      0, v.num_edges, [&](std::int64_t i) { return v.indices[i] < 0 || v.indices[i] >= v.num_cols; });
  if (e < v.num_edges)
    return {CsrArray::indices, where(v.indptr, v.num_rows, e) + ": column " + str(v.indices[e]) +
                                   " out of range, expected 0 <= column < " + str(v.num_cols)};
  if (v.weights != nullptr) {
    const std::int64_t w =
        parallel_find_first(0, v.num_edges, [&](std::int64_t i) { return !std::isfinite(v.weights[i]); });
    if (w < v.num_edges)
      return {CsrArray::weights,
              where(v.indptr, v.num_rows, w) + ": weight " + std::to_string(v.weights[w]) + " is not finite"};
  }
  return {};
}

// The sizes of g's arrays agree (the constructor's checks, repeated for a graph whose arrays
// were replaced, and for the default-constructed one).
std::string sizes_violation(const CsrGraph& g, std::int64_t num_indices) {
  const std::int64_t n = g.num_rows();
  if (g.indptr().size() != n + 1) return "indptr has " + str(g.indptr().size()) + " entries, expected " + str(n + 1);
  if (g.has_weights() && g.weights().size() != num_indices)
    return "weights has " + str(g.weights().size()) + " entries, expected " + str(num_indices);
  return {};
}

template <class I>
std::string sorted_violation(const CsrView<I>& v) {
  const std::int64_t r = parallel_find_first(0, v.num_rows, [&](std::int64_t i) {
    return !std::is_sorted(v.indices + v.indptr[i], v.indices + v.indptr[i + 1]);
  });
  if (r == v.num_rows) return {};
  const I* row = v.indices + v.indptr[r];
  const std::int64_t p = std::is_sorted_until(row, v.indices + v.indptr[r + 1]) - row;
  return "graph claims sorted rows, but row " + str(r) + " has column " + str(row[p]) + " at position " + str(p) +
         " after column " + str(row[p - 1]);
}

// The weights of a run of equal columns, as a sorted multiset (copies of an edge may appear in
// different orders in the two mirrored rows of a symmetric multigraph).
std::vector<float> run_weights(const float* w, std::int64_t begin, std::int64_t end) {
  std::vector<float> out(w + begin, w + end);
  std::sort(out.begin(), out.end());
  return out;
}

// A graph is symmetric when it equals its transpose. s holds g's rows sorted, t the transpose;
// both are sorted, so equal rows have equal column sequences, and equal runs of weights up to order.
template <class I>
std::string compare_with_transpose(const CsrView<I>& s, const CsrView<I>& t) {
  auto row_differs = [&](std::int64_t r) {
    if (s.degree(r) != t.degree(r)) return true;
    const std::int64_t sb = s.indptr[r], tb = t.indptr[r], n = s.degree(r);
    if (!std::equal(s.indices + sb, s.indices + sb + n, t.indices + tb)) return true;
    if (s.weights == nullptr) return false;
    for (std::int64_t k = 0; k < n;) {
      std::int64_t run = 1;
      while (k + run < n && s.indices[sb + k + run] == s.indices[sb + k]) ++run;
      if (run == 1 ? s.weights[sb + k] != t.weights[tb + k]
                   : run_weights(s.weights, sb + k, sb + k + run) != run_weights(t.weights, tb + k, tb + k + run))
        return true;
      k += run;
    }
    return false;
  };
  const std::int64_t r = parallel_find_first(0, s.num_rows, row_differs, 1024);
  if (r == s.num_rows) return {};

  const std::int64_t sb = s.indptr[r], tb = t.indptr[r];
  const std::int64_t sn = s.degree(r), tn = t.degree(r);
  std::int64_t k = 0;
  while (k < sn && k < tn && s.indices[sb + k] == t.indices[tb + k]) ++k;
  const std::string claim = "graph claims symmetric, but ";
  if (k < sn && (k == tn || s.indices[sb + k] < t.indices[tb + k])) {
    const std::int64_t c = s.indices[sb + k];
    return claim + "row " + str(r) + " has column " + str(c) + " and row " + str(c) + " has fewer entries in column " +
           str(r);
  }
  if (k < tn) {
    const std::int64_t c = t.indices[tb + k];
    return claim + "row " + str(c) + " has column " + str(r) + " and row " + str(r) + " has fewer entries in column " +
           str(c);
  }
  // Same columns: some run of weights differs; report the first one.
  for (k = 0;;) {
    std::int64_t run = 1;
    while (k + run < sn && s.indices[sb + k + run] == s.indices[sb + k]) ++run;
    const std::vector<float> sw = run_weights(s.weights, sb + k, sb + k + run);
    const std::vector<float> tw = run_weights(t.weights, tb + k, tb + k + run);
    const auto diff = std::mismatch(sw.begin(), sw.end(), tw.begin());
    if (diff.first != sw.end()) {
      const std::int64_t c = s.indices[sb + k];
      return claim + "row " + str(r) + ", column " + str(c) + " has weight " + std::to_string(*diff.first) +
             " and row " + str(c) + ", column " + str(r) + " has weight " + std::to_string(*diff.second);
    }
    k += run;
  }
}

std::string check_symmetric(const CsrGraph& g) {
  if (g.num_rows() != g.num_cols())
    return "graph claims symmetric, but it is " + str(g.num_rows()) + " x " + str(g.num_cols());
  const CsrGraph t = transpose(g);
  // The transpose of the transpose is g with its rows sorted (stably), unless they are already.
  const CsrGraph sorted = g.properties().sorted ? CsrGraph() : transpose(t);
  const CsrGraph& s = g.properties().sorted ? g : sorted;
  return visit(s, [&](auto sv) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(sv.indices)>>;
    return compare_with_transpose(sv, t.view<I>());
  });
}

std::string first_violation(const CsrGraph& g, Validation level) {
  if (g.num_rows() == 0 && g.indptr().empty()) return {};  // a default-constructed graph
  const std::int64_t num_indices =
      g.index_type() == IndexType::i32 ? g.indices<std::int32_t>().size() : g.indices<std::int64_t>().size();
  std::string bad = sizes_violation(g, num_indices);
  if (!bad.empty()) return bad;
  return visit(g, [&](auto v) {
    CsrViolation found = offsets_violation(v);
    if (found.array == CsrArray::none && level != Validation::cheap) found = entries_violation(v);
    if (found.array != CsrArray::none || level != Validation::expensive) return found.what;
    std::string claims = g.properties().sorted ? sorted_violation(v) : std::string();
    if (claims.empty() && g.properties().symmetric) claims = check_symmetric(g);
    return claims;
  });
}

}  // namespace

void validate(const CsrGraph& g, Validation level) {
  const std::string bad = first_violation(g, level);
  if (!bad.empty()) throw InvalidArgument("validate: " + bad);
}

void validate(const HeteroGraph& g, Validation level) {
  for (int r = 0; r < g.num_relations(); ++r) {
    const RelationType& type = g.relation_type(r);
    const CsrGraph& csr = g.relation(r);
    const std::int64_t rows = g.vertex_count(g.vertex_type(type.dst));
    const std::int64_t cols = g.vertex_count(g.vertex_type(type.src));
    std::string bad;
    if (csr.num_rows() != rows || csr.num_cols() != cols)
      bad = "CSR is " + str(csr.num_rows()) + " x " + str(csr.num_cols()) + ", expected " + str(rows) + " x " +
            str(cols) + " (rows = '" + type.dst + "', columns = '" + type.src + "')";
    else
      bad = first_violation(csr, level);
    if (!bad.empty()) throw InvalidArgument("validate: relation " + type.key() + ": " + bad);
  }
}

template <class I>
CsrViolation find_csr_violation(const CsrView<I>& v) {
  CsrViolation found = offsets_violation(v);
  return found.array != CsrArray::none ? found : entries_violation(v);
}

template CsrViolation find_csr_violation(const CsrView<std::int32_t>& v);
template CsrViolation find_csr_violation(const CsrView<std::int64_t>& v);

}  // namespace halo::graph
