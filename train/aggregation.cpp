// LocalAggregation: A · x and Aᵀ · g with an in-memory CSR.
#include "train/aggregation.hpp"

#include <utility>

#include "graph/base/error.hpp"
#include "graph/build.hpp"
#include "kernels/spmm.hpp"

namespace halo::train {

LocalAggregation::LocalAggregation(graph::CsrGraph a) : a_(std::move(a)) {
  HALO_EXPECTS(a_.num_rows() == a_.num_cols(), "the aggregation matrix must be square, got " +
                                                   std::to_string(a_.num_rows()) + " x " + std::to_string(a_.num_cols()));
  if (!a_.properties().symmetric) a_transposed_ = graph::transpose(a_);
}

kernels::Tensor LocalAggregation::forward(const kernels::Tensor& x) {
  HALO_EXPECTS(x.rows() == a_.num_cols(), "input has " + std::to_string(x.rows()) + " rows, the graph " +
                                              std::to_string(a_.num_cols()) + " vertices");
  kernels::Tensor y = kernels::Tensor::empty(a_.num_rows(), x.cols(), x.device());
  kernels::spmm(a_, x.view(), y.view());
  return y;
}

kernels::Tensor LocalAggregation::backward(const kernels::Tensor& grad_y) {
  const graph::CsrGraph& at = a_.properties().symmetric ? a_ : a_transposed_;
  HALO_EXPECTS(grad_y.rows() == at.num_cols(), "gradient has " + std::to_string(grad_y.rows()) + " rows, the graph " +
                                                   std::to_string(at.num_cols()) + " vertices");
  kernels::Tensor g = kernels::Tensor::empty(at.num_rows(), grad_y.cols(), grad_y.device());
  kernels::spmm(at, grad_y.view(), g.view());
  return g;
}

}  // namespace halo::train
