// spmm: sparse (CSR) times dense, the aggregation of every GNN layer.
#pragma once

#include <cstdint>

#include "graph/csr.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels {

enum class Accumulate { overwrite, add };

// out = A · x (Accumulate::overwrite) or out += A · x (Accumulate::add), where A is the CSR
// (num_rows x num_cols, weights or all ones), x is num_cols x f and out is num_rows x f; x and
// out on one device (the CSR's arrays must live there too). The backward product Aᵀ · g is this
// same call on the precomputed transpose (graph::transpose), so no atomics are needed.
// CPU: OpenMP over row ranges of equal nonzero count (power-law rows balance), vectorised over
// the feature dimension; deterministic (each output row is summed in CSR order by one thread).
// Cost: O(nnz · f) flops, memory traffic about nnz · f · 4 bytes of gathered rows.
// Accumulate::add adds each product onto out's old value in CSR order. out may not overlap x.
// CUDA: the CSR must be the view of a kernels::cuda::DeviceCsr on the tensors' GPU (a host CSR
// is refused with InvalidArgument); halo's kernel or cuSPARSE, see kernels/cuda/spmm.cu.
// The CSR is trusted: column ids are not range-checked here (graph::validate checks them).
// CPU, f > cpu_spmm_panel_columns: x is multiplied one panel of that many columns at a time,
// each copied into a dense block first (cpu_spmm_workspace_bytes of host memory during the call).
void spmm(const graph::CsrView<std::int32_t>& a, ConstTensorView x, TensorView out,
          Accumulate mode = Accumulate::overwrite);
void spmm(const graph::CsrView<std::int64_t>& a, ConstTensorView x, TensorView out,
          Accumulate mode = Accumulate::overwrite);

// The CPU SpMM's panel width, and the host memory it takes during a call whose x has `rows`
// rows and `cols` columns: 0 up to the panel width, else one dense panel (rows x panel floats).
constexpr std::int64_t cpu_spmm_panel_columns = 64;
constexpr std::int64_t cpu_spmm_workspace_bytes(std::int64_t rows, std::int64_t cols) {
  return cols > cpu_spmm_panel_columns ? rows * cpu_spmm_panel_columns * static_cast<std::int64_t>(sizeof(float)) : 0;
}

// The same on an owning graph (dispatches on its index type).
void spmm(const graph::CsrGraph& a, ConstTensorView x, TensorView out, Accumulate mode = Accumulate::overwrite);

// The memory of GPU `device` that cuSPARSE's kept state holds, in bytes: for the products it won
// the automatic choice, the graphs' 32-bit row offsets and unit weights and each product's work
// buffer (kernels::cuda::cusparse_state_bytes: in device_peak_bytes, in no memory plan item). 0 on
// the CPU.
std::int64_t spmm_library_bytes(Device device);

}  // namespace halo::kernels
