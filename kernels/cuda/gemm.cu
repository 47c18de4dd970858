// CUDA GEMM through cuBLAS, twin of kernels/cpu/gemm.cpp, and the segmented GEMM (one cuBLAS
// call per segment, in list order on the GPU's stream, so segments that share an output add up
// in list order as on the CPU).
//
// Row-major through column-major cuBLAS: a row-major r x c matrix with row stride s is, read
// column-major, its c x r transpose with leading dimension s. So c = op(a) · op(b) is computed as
// cᵀ = op(b)ᵀ · op(a)ᵀ, passing b before a with the same transpose flags. FP32 arithmetic
// (CUBLAS_COMPUTE_32F) unless cuda_settings().allow_tf32. Deterministic on one GPU model with
// one stream.
#include <cstdint>
#include <mutex>
#include <vector>

#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"

namespace halo::kernels::cuda {
namespace {

// cuBLAS wants a leading dimension of at least max(1, cols); the stride of a one-row view is
// never used to step and may be anything.
int leading_dimension(const ConstTensorView& v) {
  return static_cast<int>(v.rows > 1 ? v.stride : (v.cols > 1 ? v.cols : 1));
}

struct Scale {
  float* c;
  std::int64_t stride;
  float beta;
  __device__ void operator()(std::int64_t i, std::int64_t j) const {
    float& v = c[i * stride + j];
    v = beta == 0.0f ? 0.0f : beta * v;
  }
};

// One product on the GPU's stream; the caller holds the context's library mutex.
void gemm_locked(DeviceContext& context, cublasComputeType_t compute, ConstTensorView a, Transpose transpose_a,
                 ConstTensorView b, Transpose transpose_b, TensorView c, float alpha, float beta) {
  const std::int64_t m = c.rows;
  const std::int64_t n = c.cols;
  const bool ta = transpose_a == Transpose::yes;
  const bool tb = transpose_b == Transpose::yes;
  const std::int64_t k = ta ? a.rows : a.cols;
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // An empty product: c = beta · c, where beta = 0 clears c whatever it held.
    launch_elementwise(context.device, m, n, Scale{c.data, c.stride, beta});
    return;
  }
  HALO_CUBLAS_TRY(cublas_api().gemm_ex(context.cublas(), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                               static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, b.data,
                               CUDA_R_32F, leading_dimension(b), a.data, CUDA_R_32F, leading_dimension(a), &beta,
                               c.data, CUDA_R_32F, leading_dimension(c), compute, CUBLAS_GEMM_DEFAULT));
}

cublasComputeType_t compute_type() {
  return cuda_settings().allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

}  // namespace

void gemm(ConstTensorView a, Transpose transpose_a, ConstTensorView b, Transpose transpose_b, TensorView c, float alpha,
          float beta) {
  const int d = a.device.index;
  ScopedDevice scoped(d);
  DeviceContext& context = device_context(d);
  const cublasComputeType_t compute = compute_type();
  const std::lock_guard<std::mutex> lock(context.library_mutex);
  gemm_locked(context, compute, a, transpose_a, b, transpose_b, c, alpha, beta);
}

void segmented_gemm(const std::vector<GemmSegment>& segments, Transpose transpose_a, Transpose transpose_b, float alpha,
                    float beta) {
  const int d = segments.front().a.device.index;
  ScopedDevice scoped(d);
  DeviceContext& context = device_context(d);
  const cublasComputeType_t compute = compute_type();
  const std::lock_guard<std::mutex> lock(context.library_mutex);
  for (const GemmSegment& s : segments)
    gemm_locked(context, compute, s.a, transpose_a, s.b, transpose_b, s.c, alpha, beta);
}

}  // namespace halo::kernels::cuda
