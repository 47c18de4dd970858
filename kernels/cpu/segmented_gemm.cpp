// CPU segmented GEMM: the segments one after the other, each through the threaded BLAS GEMM.
// On the host a BLAS call costs microseconds, so running segments in turn loses nothing next to
// a fused kernel for the sizes of R-GCN (a few relations, thousands of rows each), and in-order
// execution is what makes segments that share an output add up deterministically.
#include "kernels/cpu/cpu_kernels.hpp"

namespace halo::kernels::cpu {

void segmented_gemm(const std::vector<GemmSegment>& segments, Transpose transpose_a, Transpose transpose_b, float alpha,
                    float beta) {
  for (const GemmSegment& s : segments) cpu::gemm(s.a, transpose_a, s.b, transpose_b, s.c, alpha, beta);
}

}  // namespace halo::kernels::cpu
