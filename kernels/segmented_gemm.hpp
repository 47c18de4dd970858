// segmented_gemm: many independent dense products in one call, each segment with its own
// operands, such as every relation's weight applied to the rows of its source type (R-GCN).
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/gemm.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels {

// One product of a segmented_gemm: c = alpha · op(a) · op(b) + beta · c.
struct GemmSegment {
  ConstTensorView a;
  ConstTensorView b;
  TensorView c;
};

// For every segment s, in list order: c_s = alpha · op(a_s) · op(b_s) + beta · c_s, op the same
// transpose for all segments; op(a_s) is m_s x k_s, op(b_s) is k_s x n_s, c_s is m_s x n_s, and
// the extents may differ between segments. beta = 0 ignores c's old values (NaN included).
// Typical use: the blocks c_s are consecutive row ranges of one stacked output; adjoints sum
// into a shared output. Outputs of two segments are either the very same window (the later
// segment then reads what the earlier wrote: with beta = 1 the products add up, in list order)
// or disjoint; no output may overlap any segment's a or b. All operands on one device.
// CPU: each segment is one OpenBLAS GEMM, threaded inside (a call costs microseconds on the
// host, unlike a kernel launch, so the relation count does not dominate). CUDA: the segments in
// the waves of segmented_gemm_waves, each wave's products in one grouped cuBLAS call
// (cublasSgemmGroupedBatched, FP32) queued on the GPU's stream after the wave before: one
// launch for all relations instead of one small GEMM each, and segments sharing an output still
// add up in list order. A wave's lone product and an empty inner dimension (c = beta · c) run
// as gemm runs them (kernels/cuda/gemm.cu).
// Cost: Σ_s 2 · m_s · n_s · k_s flops. Deterministic for a fixed thread count (on a GPU: for a
// fixed GPU model and library version).
void segmented_gemm(const std::vector<GemmSegment>& segments, Transpose transpose_a, Transpose transpose_b,
                    float alpha = 1.0f, float beta = 0.0f);

// The waves in which the GPU runs a segment list that segmented_gemm accepts: segment s goes into
// wave w, w the number of earlier segments with the same output window. So within a wave the
// outputs are pairwise disjoint (one grouped call may run them at once, in any order: no output
// overlaps an input), and the segments sharing a window run one wave after the other in list
// order, as the CPU adds them. The fewest waves that keep that order: as many as the most
// segments on one window. Each wave lists its segments in list order. O(S²) for S segments;
// pure (host only).
std::vector<std::vector<std::size_t>> segmented_gemm_waves(const std::vector<GemmSegment>& segments);

}  // namespace halo::kernels
