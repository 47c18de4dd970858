// The CPU (OpenMP) implementations behind the dispatch functions of kernels/*.hpp. Arguments are
// already validated (shapes, devices) by the dispatch; these functions check only what needs the
// data itself (index ranges). Every parallel loop goes through graph/base/parallel.hpp and every
// result is independent of the thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/csr.hpp"
#include "kernels/attention.hpp"
#include "kernels/batch_norm.hpp"
#include "kernels/bf16_rows.hpp"
#include "kernels/cpu/host_block_cache.hpp"
#include "kernels/dot_attention.hpp"
#include "kernels/dropout.hpp"
#include "kernels/gemm.hpp"
#include "kernels/loss.hpp"
#include "kernels/optimizer_ops.hpp"
#include "kernels/segmented_gemm.hpp"
#include "kernels/spmm.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels::cpu {

// memory.cpp: 64-byte aligned host memory, strided copies, fill.
void* allocate(std::size_t bytes);
void release(void* data) noexcept;
// Blocks of 1 MiB and more are recycled through a process-wide HostBlockCache
// (kernels/cpu/host_block_cache.hpp): released ones stay mapped, pages and all, for later
// requests, within the peak of the bytes live at once. release_cached_host_memory() gives the
// kept memory back to the system (a munmap per cached range; not for hot paths), e.g. when a
// program is done with a large working set; host_block_stats() reads the cache's counters.
void release_cached_host_memory() noexcept;
HostBlockStats host_block_stats();
// release_cached_host_memory(), and from now on every large block is unmapped when released.
void stop_keeping_host_blocks() noexcept;
void copy(ConstTensorView source, TensorView destination);
void fill(TensorView x, float value);

// spmm.cpp
void spmm(const graph::CsrView<std::int32_t>& a, ConstTensorView x, TensorView out, Accumulate mode);
void spmm(const graph::CsrView<std::int64_t>& a, ConstTensorView x, TensorView out, Accumulate mode);

// gemm.cpp
void gemm(ConstTensorView a, Transpose transpose_a, ConstTensorView b, Transpose transpose_b, TensorView c, float alpha,
          float beta);

// segmented_gemm.cpp
void segmented_gemm(const std::vector<GemmSegment>& segments, Transpose transpose_a, Transpose transpose_b,
                    float alpha, float beta);

// attention.cpp (kernels/attention.hpp), for int32_t and int64_t ids
template <class I>
void attention_forward(const graph::CsrView<I>& a, ConstTensorView h, ConstTensorView src_score,
                       ConstTensorView dst_score, const AttentionSpec& spec, AttentionIds ids, TensorView out,
                       TensorView row_max, TensorView row_sum);
template <class I>
void attention_backward(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView h,
                        ConstTensorView src_score, ConstTensorView dst_score, const AttentionSpec& spec,
                        AttentionIds ids, ConstTensorView row_max, ConstTensorView row_sum, ConstTensorView grad_out,
                        TensorView grad_h, TensorView grad_src_score, TensorView grad_dst_score);
void head_scores(ConstTensorView h, ConstTensorView a, TensorView score);
void head_scores_backward(ConstTensorView h, ConstTensorView a, ConstTensorView grad_score, TensorView grad_h,
                          TensorView grad_a);

// dot_attention.cpp (kernels/dot_attention.hpp), for int32_t and int64_t ids
template <class I>
void dot_attention_forward(const graph::CsrView<I>& a, ConstTensorView query, ConstTensorView keys,
                           ConstTensorView values, const DotAttentionSpec& spec, AttentionIds ids, TensorView out,
                           TensorView row_max, TensorView row_sum);
template <class I>
void dot_attention_backward(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView query,
                            ConstTensorView keys, ConstTensorView values, const DotAttentionSpec& spec,
                            AttentionIds ids, ConstTensorView row_max, ConstTensorView row_sum,
                            ConstTensorView grad_out, TensorView grad_query, TensorView grad_keys,
                            TensorView grad_values);

// rows.cpp
void gather_rows(ConstTensorView src, IndexView index, TensorView out);
void scatter_add_rows(ConstTensorView src, IndexView index, TensorView out);

// elementwise.cpp
void add_bias(TensorView x, ConstTensorView bias);
void column_sums(ConstTensorView x, TensorView out, bool accumulate);
void relu_forward(ConstTensorView x, TensorView y);
void elu_forward(ConstTensorView x, TensorView y);
void elu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x);
void gelu_forward(ConstTensorView x, TensorView y);
void gelu_backward(ConstTensorView x, ConstTensorView grad_y, TensorView grad_x);
void relu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x, float scale);
// bf16_rows.cpp: x rounded to bfloat16 into out (row stride out_stride values); its widening; ReLU's
// backward from a bfloat16 output.
void narrow_to_bf16(ConstTensorView x, std::uint16_t* out, std::int64_t out_stride);
void widen_bf16(Bf16View x, TensorView out);
void relu_backward_bf16(Bf16View y, ConstTensorView grad_y, TensorView grad_x, float scale);
void elu_backward_bf16(Bf16View y, ConstTensorView grad_y, TensorView grad_x);
void axpby(float alpha, ConstTensorView x, float beta, TensorView y);
void normalize_rows(TensorView x);
double sum_of_products(ConstTensorView x, ConstTensorView y);

// dropout.cpp: y = x · mask / (1 - p); forward and backward are the same product.
void dropout(ConstTensorView x, TensorView y, float p, DropoutKey key, IndexView global_ids);
// y = dropout(relu(y + bias)) in place; bias.data null: no bias; p = 0: no mask.
void bias_relu_dropout(TensorView y, ConstTensorView bias, float p, DropoutKey key, IndexView global_ids);

// loss.cpp
LossSum log_softmax_nll(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                        TensorView grad);
std::int64_t count_correct(ConstTensorView logits, const std::int64_t* labels, IndexView mask);

// multilabel_loss.cpp
LossSum sigmoid_bce(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                    TensorView grad);

// batch_norm.cpp
void batch_norm_sums(ConstTensorView x, TensorView sums);
void batch_norm_statistics(ConstTensorView sums, double n, float eps, float momentum, TensorView stats,
                           TensorView running_mean, TensorView running_var);
void batch_norm_running_statistics(ConstTensorView running_mean, ConstTensorView running_var, float eps,
                                   TensorView stats);
void batch_norm_forward(ConstTensorView x, ConstTensorView stats, ConstTensorView gamma, ConstTensorView beta,
                        TensorView y);
void batch_norm_backward_sums(ConstTensorView x, ConstTensorView stats, ConstTensorView grad_y, TensorView reduce);
void batch_norm_backward(ConstTensorView x, ConstTensorView stats, ConstTensorView gamma, ConstTensorView grad_y,
                         ConstTensorView reduce, double n, TensorView grad_x, TensorView grad_gamma,
                         TensorView grad_beta);

// optimizer_ops.cpp
void adam_step(TensorView param, ConstTensorView grad, TensorView m, TensorView v, const AdamHyper& h,
               std::int64_t step);
void adam_step_rows(TensorView param, ConstTensorView grad, TensorView m, TensorView v, IndexView rows,
                    const std::int64_t* steps, const AdamHyper& h);
void sgd_step(TensorView param, ConstTensorView grad, TensorView momentum, const SgdHyper& h, std::int64_t step);

// sparse_rows.cpp: the row-sparse Adam over SparseRows' flags and counts (host memory).
void accumulate_row_grad(ConstTensorView grad_all, TensorView grad, std::uint8_t* touched);
void adam_step_touched(TensorView param, TensorView grad, TensorView m, TensorView v, std::uint8_t* touched,
                       std::int64_t* steps, const AdamHyper& h);
void clear_touched(TensorView grad, std::uint8_t* touched);

}  // namespace halo::kernels::cpu
