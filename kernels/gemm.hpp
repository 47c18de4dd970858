// gemm: dense matrix products (OpenBLAS on the CPU, cuBLAS on the GPU).
#pragma once

#include "kernels/tensor.hpp"

namespace halo::kernels {

enum class Transpose { no, yes };

// c = alpha · op(a) · op(b) + beta · c, op = identity or transpose; all three on one device.
// op(a) is m x k, op(b) is k x n, c is m x n. beta = 0 ignores c's old values (NaN included).
// CPU: one single-threaded cblas_sgemm per band of c's rows, a band per OpenMP thread (small
// products in one call). Deterministic for a fixed thread count.
void gemm(ConstTensorView a, Transpose transpose_a, ConstTensorView b, Transpose transpose_b, TensorView c,
          float alpha = 1.0f, float beta = 0.0f);

}  // namespace halo::kernels
