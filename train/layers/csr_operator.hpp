// CsrOperator: a sparse matrix a layer multiplies by, kept on the device the layer trains on, so
// the code that applies it is written once for the CPU and a GPU (R-GCN's blocks, stacks and
// transposes; the row pieces of a distributed part's operator).
#pragma once

#include <cstdint>

#include "graph/csr.hpp"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/device.hpp"
#include "kernels/spmm.hpp"
#include "kernels/tensor.hpp"

namespace halo::train {

// The host CSR on the CPU; on a GPU its kernels::cuda::DeviceCsr, uploaded once at construction
// (the host copy is then dropped: the GPU's products never read host memory). Move-only.
class CsrOperator {
 public:
  CsrOperator() = default;
  // O(rows + entries); on a GPU that much host-to-device traffic (UnsupportedError for a GPU
  // this process cannot use).
  CsrOperator(graph::CsrGraph host, kernels::Device device);

  std::int64_t num_rows() const { return rows_; }
  std::int64_t num_cols() const { return cols_; }
  std::int64_t num_edges() const { return edges_; }
  // Bytes the matrix holds on its device (its CSR arrays; on a GPU with SpMM's chunk list).
  std::int64_t bytes() const;

  // out = A · x (Accumulate::overwrite) or out += A · x (add): kernels::spmm on the matrix's
  // device, x and out on it too; nothing for a matrix without rows. Deterministic.
  void multiply(kernels::ConstTensorView x, kernels::TensorView out,
                kernels::Accumulate mode = kernels::Accumulate::overwrite) const;
  // fn(view): the matrix's graph::CsrView on its device (int32 or int64 ids), for kernels that
  // take the CSR itself (attention).
  template <class F>
  void visit(F&& fn) const {
    if (gpu_.empty())
      graph::visit(host_, fn);
    else
      gpu_.visit(fn);
  }

 private:
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::int64_t edges_ = 0;
  graph::CsrGraph host_;          // on the CPU
  kernels::cuda::DeviceCsr gpu_;  // on a GPU
};

}  // namespace halo::train
