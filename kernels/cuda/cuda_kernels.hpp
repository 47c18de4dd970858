// The CUDA implementations behind the dispatch functions of kernels/*.hpp, twins of
// kernels/cpu/cpu_kernels.hpp. Plain C++ declarations (definitions in cuda/*.cu; cuda/no_cuda.cpp
// in builds without CUDA). Arguments are already validated by the dispatch, which has also
// checked that the GPU is usable; these functions check what needs the data itself.
//
// Conventions of every function here:
// - Tensors are device memory of one GPU; the work is queued on that GPU's halo stream
//   (runtime.cuh) and the call returns without waiting, except where it returns a value computed
//   on the GPU (loss, accuracy, sums), which waits for it.
// - Index arrays (IndexView, labels, steps) are host memory, as for the CPU twins: they are
//   checked on the host, then copied to the GPU with the work (no round trip). A device pointer
//   passed as one is refused with InvalidArgument. The exception: the *_prepared loss functions,
//   which take the device arrays of a kernels::LossRows (checked when it was made).
// - Results do not depend on timing: no floating-point atomics; sums run in fixed orders.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/csr.hpp"
#include "kernels/attention.hpp"
#include "kernels/batch_norm.hpp"
#include "kernels/bf16_rows.hpp"
#include "kernels/cuda/settings.hpp"
#include "kernels/device_index.hpp"
#include "kernels/dot_attention.hpp"
#include "kernels/dropout.hpp"
#include "kernels/gemm.hpp"
#include "kernels/loss.hpp"
#include "kernels/optimizer_ops.hpp"
#include "kernels/segmented_gemm.hpp"
#include "kernels/spmm.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels::cuda {

// memory.cu: throws InvalidArgument ("op: name must be host memory ...") when `data` is memory of
// GPU `device`. The CUDA twins call it on each index array before reading it on the host.
void require_host_memory(const char* op, const char* name, const void* data, int device);

// spmm.cu. The CSR must be the view of a live DeviceCsr on the tensors' GPU (InvalidArgument
// otherwise, naming DeviceCsr). Which implementation runs: cuda_settings().spmm.
void spmm(const graph::CsrView<std::int32_t>& a, ConstTensorView x, TensorView out, Accumulate mode);
void spmm(const graph::CsrView<std::int64_t>& a, ConstTensorView x, TensorView out, Accumulate mode);
// The implementation the automatic choice keeps for (graph, width), if made yet (never when
// determinism is asked: halo's kernel then runs without a choice).
std::optional<SpmmImpl> spmm_choice(std::uint64_t graph, std::int64_t width);
// Drops the cuSPARSE descriptors, work buffers and choices kept for a graph (DeviceCsr's
// destructor calls it). Never throws.
void forget_spmm_graph(std::uint64_t graph) noexcept;
// The GPU memory that cuSPARSE's kept state holds in this process (one GPU per process), in bytes:
// for the products it won, the graphs' 32-bit row offsets and unit weights and each product's work
// buffer. 0 without CUDA.
std::int64_t cusparse_state_bytes();

// gemm.cu: cuBLAS, FP32 (TF32 only when cuda_settings().allow_tf32).
void gemm(ConstTensorView a, Transpose transpose_a, ConstTensorView b, Transpose transpose_b, TensorView c, float alpha,
          float beta);
// The segments wave by wave (segmented_gemm_waves), one grouped cuBLAS call per wave of two or
// more products, in wave order on one stream; the pointer arrays go through the pool.
void segmented_gemm(const std::vector<GemmSegment>& segments, Transpose transpose_a, Transpose transpose_b, float alpha,
                    float beta);

// rows.cu: over an index on the tensors' GPU (the dispatch builds one for a host IndexView).
void gather_rows(ConstTensorView src, const DeviceIndex& index, TensorView out);
void scatter_add_rows(ConstTensorView src, const DeviceIndex& index, TensorView out);

// elementwise.cu
void add_bias(TensorView x, ConstTensorView bias);
void column_sums(ConstTensorView x, TensorView out, bool accumulate);
// attention.cu (kernels/attention.hpp); elu in elementwise.cu, for int32_t and int64_t ids
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

// dot_attention.cu (kernels/dot_attention.hpp), for int32_t and int64_t ids
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
void elu_forward(ConstTensorView x, TensorView y);
void elu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x);
void gelu_forward(ConstTensorView x, TensorView y);
void gelu_backward(ConstTensorView x, ConstTensorView grad_y, TensorView grad_x);

void relu_forward(ConstTensorView x, TensorView y);
void relu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x, float scale);
// bf16_rows.cu: the CPU twins' bits (round to nearest even; exact widening).
void narrow_to_bf16(ConstTensorView x, std::uint16_t* out, std::int64_t out_stride);
void widen_bf16(Bf16View x, TensorView out);
void relu_backward_bf16(Bf16View y, ConstTensorView grad_y, TensorView grad_x, float scale);
void elu_backward_bf16(Bf16View y, ConstTensorView grad_y, TensorView grad_x);
void axpby(float alpha, ConstTensorView x, float beta, TensorView y);
void normalize_rows(TensorView x);
double sum_of_products(ConstTensorView x, ConstTensorView y);

// dropout.cu: the CPU twin's mask, bit for bit.
// global_ids: x.rows ids in device memory, or nullptr for the row numbers.
void dropout(ConstTensorView x, TensorView y, float p, DropoutKey key, const std::int64_t* global_ids);
// y = dropout(relu(y + bias)) in place, the CPU twin's bits; bias.data null: no bias; p = 0: no mask.
void bias_relu_dropout(TensorView y, ConstTensorView bias, float p, DropoutKey key, const std::int64_t* global_ids);

// loss.cu
LossSum log_softmax_nll(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                        TensorView grad);
std::int64_t count_correct(ConstTensorView logits, const std::int64_t* labels, IndexView mask);
// The same over masked rows and their labels already in device memory (n each, made by
// LossRows, which checked them); nothing but the results comes back to the host.
LossSum log_softmax_nll_prepared(ConstTensorView logits, const std::int64_t* rows, const std::int64_t* labels,
                                 std::int64_t n, float grad_scale, TensorView grad);
std::int64_t count_correct_prepared(ConstTensorView logits, const std::int64_t* rows, const std::int64_t* labels,
                                    std::int64_t n);

// multilabel_loss.cu
LossSum sigmoid_bce(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                    TensorView grad);

// batch_norm.cu
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

// optimizer_ops.cu
void adam_step(TensorView param, ConstTensorView grad, TensorView m, TensorView v, const AdamHyper& h,
               std::int64_t step);
void adam_step_rows(TensorView param, ConstTensorView grad, TensorView m, TensorView v, IndexView rows,
                    const std::int64_t* steps, const AdamHyper& h);
void sgd_step(TensorView param, ConstTensorView grad, TensorView momentum, const SgdHyper& h, std::int64_t step);
// The row-sparse Adam over a SparseRows' flags and counts, which are device memory of the
// tensors' GPU (the exception to the host index arrays above: they never leave the device).
void accumulate_row_grad(ConstTensorView grad_all, TensorView grad, std::uint8_t* touched);
void adam_step_touched(TensorView param, TensorView grad, TensorView m, TensorView v, std::uint8_t* touched,
                       std::int64_t* steps, const AdamHyper& h);
void clear_touched(TensorView grad, std::uint8_t* touched);

}  // namespace halo::kernels::cuda
