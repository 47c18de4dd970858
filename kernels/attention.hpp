// Graph attention (Veličković et al.'s GAT) as fused kernels: per-edge scores from per-vertex
// terms, a softmax over each destination's incoming edges, and the weighted sum of the source
// rows, per head, in one pass over each row. Nothing per edge is ever stored: no E x F tensor,
// not even E x heads values between forward and backward (backward recomputes the coefficients
// from the per-row maximum and sum the forward keeps).
//
// The CSR A has one row per destination i and one column per source j (its weights are not
// read; a repeated entry counts as often as it appears). With heads H and F = h.cols / H columns
// per head (head k in columns [k·F, (k+1)·F)):
//   z_ij = src_score[j, k] + dst_score[i, k],  e_ij = z_ij > 0 ? z_ij : negative_slope · z_ij
//   α_ij = exp(e_ij - max_i) / Σ_j' exp(e_ij' - max_i)       (max_i: the row's largest e)
//   α'_ij = α_ij · keep_ij / (1 - p)                          (attention dropout, when p > 0)
//   out[i, head k] = Σ_j α'_ij · h[j, head k]
// A row without entries gives zeros. keep_ij is a pure function of (key, global id of i, global
// id of j, head): kernels/detail/attention_mask.hpp, the same on every device, thread count and
// partitioning (repeated entries of one pair share it).
//
// Cost per entry and head: forward F multiply-adds (the gather of h_j), two exponentials;
// backward 3 F multiply-adds (the dot g_i · h_j twice, once per pass, and the scatter into the
// source's gradient), two exponentials. Bytes per entry: the F floats of h_j per head, gathered,
// and in backward also g_i. On a GPU an entry's head that the dropout drops (α' = 0) skips its
// gathers and dots (for finite rows its terms are exact zeros, so the sums are the same): under
// dropout p, training reads 1 - p of those bytes. (The CPU gathers them all: there the cost is
// the latency of reaching each row, which a dropped head does not save; tried on a 2-core Xeon,
// no measurable gain.)
// Deterministic: every output row is summed in CSR order by one thread (CPU) or one warp (CUDA);
// backward reaches the sources through the precomputed transpose, so no atomics are needed.
#pragma once

#include <cstdint>

#include "graph/csr.hpp"
#include "kernels/device_index.hpp"
#include "kernels/dropout.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels {

struct AttentionSpec {
  std::int64_t heads = 1;
  float negative_slope = 0.2f;
  float dropout = 0.0f;  // p in [0, 1) on the attention coefficients
  DropoutKey key;        // the dropout mask's key (seed, epoch, layer)
};

// The global ids the dropout mask is keyed on: of A's rows (destinations) and of its columns
// (sources), built once on the tensors' device; null (or empty) stands for the row (column)
// numbers.
struct AttentionIds {
  const DeviceIndex* dst = nullptr;
  const DeviceIndex* src = nullptr;
};

// out = the attention aggregation above (num_rows x H·F), and what backward needs of the softmax:
// row_max and row_sum (num_rows x H; 0 and 0 for a row without entries). h is num_cols x H·F,
// src_score num_cols x H, dst_score num_rows x H; every tensor on one device (a GPU's CSR must be
// the view of a kernels::cuda::DeviceCsr there). out may not overlap h. InvalidArgument for
// shapes that do not fit, a head count that does not divide h's columns, or p outside [0, 1).
void attention_forward(const graph::CsrView<std::int32_t>& a, ConstTensorView h, ConstTensorView src_score,
                       ConstTensorView dst_score, const AttentionSpec& spec, AttentionIds ids, TensorView out,
                       TensorView row_max, TensorView row_sum);
void attention_forward(const graph::CsrView<std::int64_t>& a, ConstTensorView h, ConstTensorView src_score,
                       ConstTensorView dst_score, const AttentionSpec& spec, AttentionIds ids, TensorView out,
                       TensorView row_max, TensorView row_sum);

// The floats per destination row of attention_backward's workspace: on the CPU 4 H (each row's
// scores, maximum, 1 / sum and Σ_j α_ij · dα_ij packed for pass 2), on a GPU H (that sum alone;
// pass 2 reads the rest from the operands). The memory plan counts it (train::ModelShape). On a GPU
// a row longer than 512 entries is summed in chunks whose partial results take a scratch of, per
// chunk, H·F + 2H floats in forward and in backward 3H (pass 1, over A's chunks) then H·F + H
// (pass 2, over Aᵀ's), for the call only; the plan leaves it out: chunks are at most E / 512
// plus the long rows (18 MB for the 1 M-vertex R-MAT's 17 K chunks at 8 heads × 32, against
// plans of gigabytes).
constexpr std::int64_t attention_workspace_width(std::int64_t heads, bool on_gpu) { return on_gpu ? heads : 4 * heads; }

// From grad_out = d loss / d out of a forward with the same operands (and its row_max, row_sum):
// grad_h (num_cols x H·F) = Σ_i α'_ij · grad_out[i], grad_src_score (num_cols x H) and
// grad_dst_score (num_rows x H), all overwritten. `at` is Aᵀ (graph::transpose of A: one row per
// source, listing its destinations), the same index type. Two passes: over A's rows (the
// softmax's Σ_j α_ij · dα_ij per row and head, kept in a workspace of num_rows x
// attention_workspace_width floats, and grad_dst_score), then over Aᵀ's rows (grad_h and
// grad_src_score). The outputs may not overlap the inputs. A row whose scores z_ij all have one
// sign (a row of one entry always) gets grad_dst_score exactly 0, its dst score cancelling in the
// softmax: each entry's term is weighted by leaky'(z_ij) less the row's first entry's, which leaves
// the sum unchanged (Σ_j α_ij (dα_ij - Σ α dα) = 0) and is exactly 0 there, on both devices, so no
// rounding noise reaches an optimiser that would scale it to whole steps (Adam).
void attention_backward(const graph::CsrView<std::int32_t>& a, const graph::CsrView<std::int32_t>& at,
                        ConstTensorView h, ConstTensorView src_score, ConstTensorView dst_score,
                        const AttentionSpec& spec, AttentionIds ids, ConstTensorView row_max, ConstTensorView row_sum,
                        ConstTensorView grad_out, TensorView grad_h, TensorView grad_src_score,
                        TensorView grad_dst_score);
void attention_backward(const graph::CsrView<std::int64_t>& a, const graph::CsrView<std::int64_t>& at,
                        ConstTensorView h, ConstTensorView src_score, ConstTensorView dst_score,
                        const AttentionSpec& spec, AttentionIds ids, ConstTensorView row_max, ConstTensorView row_sum,
                        ConstTensorView grad_out, TensorView grad_h, TensorView grad_src_score,
                        TensorView grad_dst_score);

// The per-head scores score[j, k] = Σ_f h[j, k·F + f] · a[k, f]: h is rows x H·F, a is H x F,
// score rows x H. O(rows · H · F).
void head_scores(ConstTensorView h, ConstTensorView a, TensorView score);
// Its backward from grad_score (rows x H): grad_h[j, k·F + f] += grad_score[j, k] · a[k, f] and
// grad_a[k, f] += Σ_j grad_score[j, k] · h[j, k·F + f] (summed over the rows in a fixed order,
// deterministic). O(rows · H · F).
void head_scores_backward(ConstTensorView h, ConstTensorView a, ConstTensorView grad_score, TensorView grad_h,
                          TensorView grad_a);

}  // namespace halo::kernels
