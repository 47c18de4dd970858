// CUDA GEMM through cuBLAS, twin of kernels/cpu/gemm.cpp, and the segmented GEMM: its waves
// (segmented_gemm_waves) one after the other on the GPU's stream, each wave's products in one
// grouped cuBLAS call, so segments that share an output add up in list order as on the CPU.
//
// Row-major through column-major cuBLAS: a row-major r x c matrix with row stride s is, read
// column-major, its c x r transpose with leading dimension s. So c = op(a) · op(b) is computed as
// cᵀ = op(b)ᵀ · op(a)ᵀ, passing b before a with the same transpose flags. FP32 arithmetic
// (CUBLAS_COMPUTE_32F) unless cuda_settings().allow_tf32 (plain GEMMs only: the grouped calls
// keep the handle's default FP32 math). Deterministic on one GPU model with one stream.
#include <cstddef>
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
    launch_elementwise(context.device, m, n, Scale{c.data, c.stride, beta}, c.stride == n);
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

// The products of a segment list that go into grouped calls, in wave order, as cuBLAS sees each
// (cᵀ = op(b)ᵀ · op(a)ᵀ, a group of one product): the host arrays of the call and the matrices'
// device pointers, which the call reads from device memory.
struct GroupedProducts {
  std::vector<cublasOperation_t> op_b, op_a;
  std::vector<int> n, m, k, ld_b, ld_a, ld_c, sizes;
  std::vector<float> alphas, betas;
  std::vector<const float*> b, a;
  std::vector<float*> c;

  void add(const GemmSegment& s, bool ta, bool tb, float alpha, float beta) {
    op_b.push_back(tb ? CUBLAS_OP_T : CUBLAS_OP_N);
    op_a.push_back(ta ? CUBLAS_OP_T : CUBLAS_OP_N);
    n.push_back(static_cast<int>(s.c.cols));
    m.push_back(static_cast<int>(s.c.rows));
    k.push_back(static_cast<int>(ta ? s.a.rows : s.a.cols));
    ld_b.push_back(leading_dimension(s.b));
    ld_a.push_back(leading_dimension(s.a));
    ld_c.push_back(leading_dimension(s.c));
    sizes.push_back(1);
    alphas.push_back(alpha);
    betas.push_back(beta);
    b.push_back(s.b.data);
    a.push_back(s.a.data);
    c.push_back(s.c.data);
  }
  std::size_t size() const { return c.size(); }
};

bool has_work(const GemmSegment& s, bool ta) { return s.c.rows > 0 && s.c.cols > 0 && (ta ? s.a.rows : s.a.cols) > 0; }

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
  const bool ta = transpose_a == Transpose::yes;
  const bool tb = transpose_b == Transpose::yes;
  // Per wave: its products with work (every extent positive) go into one grouped call when there
  // are two or more; a lone product and the scalings of an empty inner dimension run alone.
  const std::vector<std::vector<std::size_t>> waves = segmented_gemm_waves(segments);
  GroupedProducts grouped;
  std::vector<std::size_t> first(waves.size() + 1, 0);  // wave w's products: [first[w], first[w + 1])
  std::vector<std::vector<std::size_t>> alone(waves.size());
  for (std::size_t w = 0; w < waves.size(); ++w) {
    std::vector<std::size_t> work;
    for (std::size_t s : waves[w]) {
      if (has_work(segments[s], ta))
        work.push_back(s);
      else
        alone[w].push_back(s);
    }
    if (work.size() == 1) alone[w].push_back(work.front());
    if (work.size() > 1)
      for (std::size_t s : work) grouped.add(segments[s], ta, tb, alpha, beta);
    first[w + 1] = grouped.size();
  }
  // The matrices' addresses, uploaded once for all waves through the pool on halo's stream (the
  // buffers are freed in stream order, after the calls that read them).
  const auto count = static_cast<std::int64_t>(grouped.size());
  std::vector<const float*> input_pointers = grouped.b;
  input_pointers.insert(input_pointers.end(), grouped.a.begin(), grouped.a.end());
  const DeviceBuffer<const float*> inputs = upload(d, input_pointers.data(), 2 * count);
  const DeviceBuffer<float*> outputs = upload(d, grouped.c.data(), count);

  const std::lock_guard<std::mutex> lock(context.library_mutex);
  for (std::size_t w = 0; w < waves.size(); ++w) {
    for (std::size_t s : alone[w])
      gemm_locked(context, compute, segments[s].a, transpose_a, segments[s].b, transpose_b, segments[s].c, alpha, beta);
    const std::size_t o = first[w];
    const auto products = static_cast<int>(first[w + 1] - o);
    if (products == 0) continue;
    HALO_CUBLAS_TRY(cublas_api().sgemm_grouped_batched(
        context.cublas(), grouped.op_b.data() + o, grouped.op_a.data() + o, grouped.n.data() + o,
        grouped.m.data() + o, grouped.k.data() + o, grouped.alphas.data() + o, inputs.data() + o,
        grouped.ld_b.data() + o, inputs.data() + count + o, grouped.ld_a.data() + o, grouped.betas.data() + o,
        outputs.data() + o, grouped.ld_c.data() + o, products, grouped.sizes.data() + o));
  }
}

}  // namespace halo::kernels::cuda
