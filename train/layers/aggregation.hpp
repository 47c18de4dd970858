// Aggregation: the graph operator of a layer, y = A · x, and its adjoint, g_x = Aᵀ · g_y.
// One process applies a local CSR (LocalAggregation), on the CPU or on one GPU; a rank of a
// distributed run (issue #5) first exchanges halo rows, then applies its part's CSR, so layers
// are written once.
#pragma once

#include <cstdint>

#include "graph/csr.hpp"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/device.hpp"
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
// when the CSR is symmetric, which GCN's normalised adjacency of an undirected graph is). The
// products run on `device` (kernels::spmm, deterministic on either device): on the CPU with the
// host CSR; on a GPU with copies of A (and Aᵀ) made there once, as kernels::cuda::DeviceCsr, so
// an epoch moves no graph data. The tensors given must live on `device` (InvalidArgument
// otherwise, naming both devices).
class LocalAggregation : public Aggregation {
 public:
  // Builds Aᵀ when `a` does not claim symmetry (O(E) on the host); on a GPU also copies A and Aᵀ
  // there (O(E) host-to-device traffic; UnsupportedError when the GPU cannot be used), keeping
  // only A on the host.
  explicit LocalAggregation(graph::CsrGraph a, kernels::Device device = kernels::Device::cpu());
  std::int64_t num_vertices() const override { return a_.num_rows(); }
  kernels::Tensor forward(const kernels::Tensor& x) override;
  kernels::Tensor backward(const kernels::Tensor& grad_y) override;
  // A on the host (whatever the device).
  const graph::CsrGraph& matrix() const { return a_; }
  const kernels::Device& device() const { return device_; }

 private:
  void check_device(const char* what, const kernels::Tensor& t) const;

  graph::CsrGraph a_;
  graph::CsrGraph a_transposed_;  // host Aᵀ for the CPU; empty when a_ claims symmetry or on a GPU
  kernels::Device device_;
  kernels::cuda::DeviceCsr gpu_a_;             // on a GPU: A
  kernels::cuda::DeviceCsr gpu_a_transposed_;  // on a GPU: Aᵀ, empty when a_ claims symmetry
};

}  // namespace halo::train
