// Aggregation: the graph operator of a layer, y = A · x, and its adjoint, g_x = Aᵀ · g_y.
// One process applies a local CSR (LocalAggregation); a rank of a distributed run (issue #5)
// first exchanges halo rows, then applies its part's CSR, so layers are written once.
#pragma once

#include <cstdint>

#include "graph/csr.hpp"
#include "kernels/tensor.hpp"

namespace halo::train {

class Aggregation {
 public:
  virtual ~Aggregation() = default;
  // Rows of x and of the result (the vertices this process owns).
  virtual std::int64_t num_vertices() const = 0;
  // y = A · x.
  virtual kernels::Tensor forward(const kernels::Tensor& x) = 0;
  // g_x = Aᵀ · g_y.
  virtual kernels::Tensor backward(const kernels::Tensor& grad_y) = 0;
};

// A · x with a square CSR held in memory, and Aᵀ through its precomputed transpose (or A itself
// when the CSR is symmetric, which GCN's normalised adjacency of an undirected graph is).
class LocalAggregation : public Aggregation {
 public:
  explicit LocalAggregation(graph::CsrGraph a);
  std::int64_t num_vertices() const override { return a_.num_rows(); }
  kernels::Tensor forward(const kernels::Tensor& x) override;
  kernels::Tensor backward(const kernels::Tensor& grad_y) override;
  const graph::CsrGraph& matrix() const { return a_; }

 private:
  graph::CsrGraph a_;
  graph::CsrGraph a_transposed_;  // empty when a_ claims symmetry
};

}  // namespace halo::train
