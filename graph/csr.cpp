// CsrGraph construction checks, reweighting and copies.
#include "graph/csr.hpp"

#include <utility>

namespace halo::graph {

CsrGraph::CsrGraph() : indptr_(Array<std::int64_t>::from_vector({0})) {}

CsrGraph::CsrGraph(std::int64_t num_rows, std::int64_t num_cols, Array<std::int64_t> indptr,
                   Array<std::int32_t> indices, Array<float> weights, CsrProperties properties)
    : CsrGraph(num_rows, num_cols, IndexType::i32, std::move(indptr), std::move(indices), {}, std::move(weights),
               properties) {}

CsrGraph::CsrGraph(std::int64_t num_rows, std::int64_t num_cols, Array<std::int64_t> indptr,
                   Array<std::int64_t> indices, Array<float> weights, CsrProperties properties)
    : CsrGraph(num_rows, num_cols, IndexType::i64, std::move(indptr), {}, std::move(indices), std::move(weights),
               properties) {}

CsrGraph::CsrGraph(std::int64_t num_rows, std::int64_t num_cols, IndexType index_type, Array<std::int64_t> indptr,
                   Array<std::int32_t> indices32, Array<std::int64_t> indices64, Array<float> weights,
                   CsrProperties properties)
    : num_rows_(num_rows),
      num_cols_(num_cols),
      index_type_(index_type),
      indptr_(std::move(indptr)),
      indices32_(std::move(indices32)),
      indices64_(std::move(indices64)),
      weights_(std::move(weights)),
      properties_(properties) {
  HALO_EXPECTS(index_type == IndexType::i64 || num_cols <= std::numeric_limits<std::int32_t>::max(),
               "int32 indices cannot address " + std::to_string(num_cols) + " columns");
  check_shapes(index_type == IndexType::i32 ? indices32_.size() : indices64_.size());
}

void CsrGraph::check_shapes(std::int64_t indices_size) const {
  HALO_EXPECTS(num_rows_ >= 0 && num_cols_ >= 0,
               "negative shape " + std::to_string(num_rows_) + " x " + std::to_string(num_cols_));
  HALO_EXPECTS(indptr_.size() == num_rows_ + 1,
               "indptr has " + std::to_string(indptr_.size()) + " entries, expected num_rows + 1 = " +
                   std::to_string(num_rows_ + 1));
  HALO_EXPECTS(indptr_[0] == 0, "indptr[0] is " + std::to_string(indptr_[0]) + ", expected 0");
  HALO_EXPECTS(indptr_[num_rows_] == indices_size,
               "indptr ends at " + std::to_string(indptr_[num_rows_]) + " but there are " +
                   std::to_string(indices_size) + " indices");
  HALO_EXPECTS(weights_.empty() || weights_.size() == indices_size,
               "weights has " + std::to_string(weights_.size()) + " entries, expected one per edge (" +
                   std::to_string(indices_size) + ")");
}

CsrGraph CsrGraph::with_weights(Array<float> weights) && {
  HALO_EXPECTS(weights.empty() || weights.size() == num_edges(),
               "weights has " + std::to_string(weights.size()) + " entries, expected " +
                   std::to_string(num_edges()));
  CsrGraph g = std::move(*this);
  g.weights_ = std::move(weights);
  return g;
}

CsrGraph CsrGraph::clone() const {
  if (index_type_ == IndexType::i32)
    return CsrGraph(num_rows_, num_cols_, indptr_.clone(), indices32_.clone(), weights_.clone(), properties_);
  return CsrGraph(num_rows_, num_cols_, indptr_.clone(), indices64_.clone(), weights_.clone(), properties_);
}

}  // namespace halo::graph
