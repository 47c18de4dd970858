// Scaled dot-product attention over a sparse graph (the attention of HGT, Hu et al. 2020, and of
// graph transformers) as fused kernels on the same plan as GAT's (kernels/attention.hpp): scores
// computed on the fly from per-vertex rows, a softmax over each destination's incoming entries,
// the weighted sum of the value rows, per head, one pass over each row; nothing per edge is
// stored (backward recomputes the coefficients from the per-row maximum and sum).
//
// The CSR A has one row per destination i and one column per source j (its weights are not
// read; a repeated entry counts as often as it appears). With heads H, query (num_rows x H·Fk),
// keys (num_cols x H·Fk) and values (num_cols x H·Fv), head k in columns [k·F, (k+1)·F):
//   e_ij = query[i, head k] · keys[j, head k]     (a scale such as 1/√Fk, or HGT's per-relation
//                                                  prior, is folded into keys by the caller)
//   α_ij = exp(e_ij - max_i) / Σ_j' exp(e_ij' - max_i)
//   α'_ij = α_ij · keep_ij / (1 - p)              (attention dropout, when p > 0)
//   out[i, head k] = Σ_j α'_ij · values[j, head k]
// A row without entries gives zeros. keep_ij is GAT's mask (kernels/detail/attention_mask.hpp),
// a pure function of (key, global ids of i and j, head): the same on every device, thread count
// and partitioning. With a relation-stacked CSR (graph/relation_stack.hpp: a column block per
// relation, keys and values stacked in the same blocks) the softmax runs over every incoming
// entry of a destination across its relations, as HGT's heterogeneous softmax.
//
// Cost per entry and head: forward Fk + Fv multiply-adds (two gathered rows) and one
// exponential; backward 2 Fk + Fv (pass 1: the score again, dα, the query's gradient) and
// 2 Fk + 2 Fv (pass 2: the score, dα, the keys' and values' gradients) with one exponential each.
// Deterministic: every output row is summed in CSR order by one thread (CPU) or one warp (CUDA);
// backward reaches the sources through the transpose, so no atomics are needed.
#pragma once

#include <cstdint>

#include "graph/csr.hpp"
#include "kernels/attention.hpp"
#include "kernels/device_index.hpp"
#include "kernels/dropout.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels {

struct DotAttentionSpec {
  std::int64_t heads = 1;
  float dropout = 0.0f;  // p in [0, 1) on the attention coefficients
  DropoutKey key;        // the dropout mask's key (seed, epoch, layer)
};

// out = the attention above (num_rows x H·Fv), and what backward needs of the softmax: row_max
// and row_sum (num_rows x H; 0 and 0 for a row without entries). Every tensor on one device (a
// GPU's CSR must be the view of a kernels::cuda::DeviceCsr there). out may not overlap the
// inputs. InvalidArgument for shapes that do not fit, a head count that divides neither width,
// or p outside [0, 1).
void dot_attention_forward(const graph::CsrView<std::int32_t>& a, ConstTensorView query, ConstTensorView keys,
                           ConstTensorView values, const DotAttentionSpec& spec, AttentionIds ids, TensorView out,
                           TensorView row_max, TensorView row_sum);
void dot_attention_forward(const graph::CsrView<std::int64_t>& a, ConstTensorView query, ConstTensorView keys,
                           ConstTensorView values, const DotAttentionSpec& spec, AttentionIds ids, TensorView out,
                           TensorView row_max, TensorView row_sum);

// From grad_out = d loss / d out of a forward with the same operands (and its row_max, row_sum):
// grad_query (num_rows x H·Fk), grad_keys (num_cols x H·Fk) and grad_values (num_cols x H·Fv),
// all overwritten. `at` is Aᵀ (graph::transpose of A), the same index type. Two passes: over A's
// rows (grad_query, and each row's Σ_j α_ij · dα_ij in a workspace of num_rows x 3 H floats on
// the CPU, H on a GPU), then over Aᵀ's rows (grad_keys and grad_values). The outputs may not
// overlap the inputs.
void dot_attention_backward(const graph::CsrView<std::int32_t>& a, const graph::CsrView<std::int32_t>& at,
                            ConstTensorView query, ConstTensorView keys, ConstTensorView values,
                            const DotAttentionSpec& spec, AttentionIds ids, ConstTensorView row_max,
                            ConstTensorView row_sum, ConstTensorView grad_out, TensorView grad_query,
                            TensorView grad_keys, TensorView grad_values);
void dot_attention_backward(const graph::CsrView<std::int64_t>& a, const graph::CsrView<std::int64_t>& at,
                            ConstTensorView query, ConstTensorView keys, ConstTensorView values,
                            const DotAttentionSpec& spec, AttentionIds ids, ConstTensorView row_max,
                            ConstTensorView row_sum, ConstTensorView grad_out, TensorView grad_query,
                            TensorView grad_keys, TensorView grad_values);

}  // namespace halo::kernels
