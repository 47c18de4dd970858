// CsrGraph: compressed sparse rows with int64 row offsets, int32 or int64 column indices and
// optional float edge weights, over owning Arrays (heap or read-only file maps), plus the
// trivially copyable CsrView that kernels take.
//
// Orientation: row i lists the vertices i aggregates from. For a graph read from an edge list
// (src -> dst), rows are destinations and columns are sources (in-edges), as in PyG and DGL's
// message passing. Rows and columns may be different vertex sets (a relation of a heterogeneous
// graph; a part's local graph whose columns include halo vertices), so num_rows and num_cols are
// separate.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "graph/base/array.hpp"
#include "graph/base/error.hpp"

namespace halo::graph {

enum class IndexType { i32, i64 };

// int32 indices when every column id fits (num_cols <= 2^31 - 1), else int64.
inline IndexType index_type_for(std::int64_t num_cols) {
  return num_cols <= std::numeric_limits<std::int32_t>::max() ? IndexType::i32 : IndexType::i64;
}
inline const char* to_string(IndexType t) { return t == IndexType::i32 ? "int32" : "int64"; }

template <class I>
inline constexpr IndexType index_type_of = std::is_same_v<I, std::int32_t> ? IndexType::i32 : IndexType::i64;

// What a CSR claims about itself; validate() checks the claims in its expensive mode.
struct CsrProperties {
  bool sorted = false;     // columns ascend within each row
  bool symmetric = false;  // square, and (i, j) is an edge iff (j, i) is, with equal weights
};

// Read-only view for kernels: plain pointers, trivially copyable, safe to pass to a CUDA kernel
// once the arrays live on the device.
template <class I>
struct CsrView {
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  std::int64_t num_edges = 0;
  const std::int64_t* indptr = nullptr;  // num_rows + 1 offsets
  const I* indices = nullptr;            // num_edges column ids
  const float* weights = nullptr;        // num_edges weights, or nullptr (all ones)

  std::int64_t degree(std::int64_t row) const { return indptr[row + 1] - indptr[row]; }
};

class CsrGraph {
 public:
  // The empty 0 x 0 graph (indptr = {0}).
  CsrGraph();
  // Takes ownership of the arrays. Cheap checks only (O(1)): indptr has num_rows + 1 entries,
  // starts at 0 and ends at indices.size(); weights are empty or one per edge; the index type
  // can hold num_cols. validate() does the full check.
  CsrGraph(std::int64_t num_rows, std::int64_t num_cols, Array<std::int64_t> indptr,
           Array<std::int32_t> indices, Array<float> weights = {}, CsrProperties properties = {});
  CsrGraph(std::int64_t num_rows, std::int64_t num_cols, Array<std::int64_t> indptr,
           Array<std::int64_t> indices, Array<float> weights = {}, CsrProperties properties = {});

  std::int64_t num_rows() const { return num_rows_; }
  std::int64_t num_cols() const { return num_cols_; }
  std::int64_t num_edges() const { return num_rows_ == 0 ? 0 : indptr_[num_rows_]; }
  IndexType index_type() const { return index_type_; }
  bool has_weights() const { return !weights_.empty(); }
  const CsrProperties& properties() const { return properties_; }

  const Array<std::int64_t>& indptr() const { return indptr_; }
  // The index array of the graph's index type; asking for the other type throws.
  template <class I>
  const Array<I>& indices() const;
  const Array<float>& weights() const { return weights_; }

  // View of the arrays with index type I (must match index_type()).
  template <class I>
  CsrView<I> view() const;

  // The same structure with new edge weights (one per edge), or without weights (empty array).
  CsrGraph with_weights(Array<float> weights) &&;
  // A heap copy (writable even when this graph maps files).
  CsrGraph clone() const;

 private:
  // What both public constructors do; the index array of the other type is empty.
  CsrGraph(std::int64_t num_rows, std::int64_t num_cols, IndexType index_type, Array<std::int64_t> indptr,
           Array<std::int32_t> indices32, Array<std::int64_t> indices64, Array<float> weights,
           CsrProperties properties);
  void check_shapes(std::int64_t indices_size) const;

  std::int64_t num_rows_ = 0;
  std::int64_t num_cols_ = 0;
  IndexType index_type_ = IndexType::i32;
  Array<std::int64_t> indptr_;
  Array<std::int32_t> indices32_;
  Array<std::int64_t> indices64_;
  Array<float> weights_;
  CsrProperties properties_;
};

template <>
inline const Array<std::int32_t>& CsrGraph::indices<std::int32_t>() const {
  HALO_EXPECTS(index_type_ == IndexType::i32, "graph has int64 indices, asked for int32");
  return indices32_;
}
template <>
inline const Array<std::int64_t>& CsrGraph::indices<std::int64_t>() const {
  HALO_EXPECTS(index_type_ == IndexType::i64, "graph has int32 indices, asked for int64");
  return indices64_;
}

template <class I>
CsrView<I> CsrGraph::view() const {
  CsrView<I> v;
  v.num_rows = num_rows_;
  v.num_cols = num_cols_;
  v.num_edges = num_edges();
  v.indptr = indptr_.data();
  v.indices = indices<I>().data();
  v.weights = weights_.empty() ? nullptr : weights_.data();
  return v;
}

// Calls fn(view) with the CsrView of the graph's own index type; returns what fn returns.
template <class F>
decltype(auto) visit(const CsrGraph& g, F&& fn) {
  if (g.index_type() == IndexType::i32) return fn(g.view<std::int32_t>());
  return fn(g.view<std::int64_t>());
}

}  // namespace halo::graph
