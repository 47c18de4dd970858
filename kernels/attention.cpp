// Attention dispatch: checks the operands, times the call, and runs the CPU or CUDA twin.
#include "kernels/attention.hpp"

#include <string>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/attention_checks.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {
namespace {

// The operands both directions share: h, the scores, the head count and the dropout.
template <class I>
void check_operands(const char* op, const graph::CsrView<I>& a, ConstTensorView h, ConstTensorView src_score,
                    ConstTensorView dst_score, const AttentionSpec& spec, AttentionIds ids) {
  detail::check_csr(op, "the CSR", a);
  detail::check_view(op, "h", h);
  HALO_KERNEL_EXPECTS(
      op, spec.heads >= 1 && h.cols % spec.heads == 0,
      "heads must divide h's " + std::to_string(h.cols) + " columns, got " + std::to_string(spec.heads));
  HALO_KERNEL_EXPECTS(op, spec.dropout >= 0.0f && spec.dropout < 1.0f,
                      "attention dropout must be in [0, 1), got " + std::to_string(spec.dropout));
  HALO_KERNEL_EXPECTS(op, h.rows == a.num_cols,
                      "h must have one row per CSR column (" + std::to_string(a.num_cols) + "), got " +
                          std::to_string(h.rows));
  detail::check_shape(op, "src_score", src_score, a.num_cols, spec.heads);
  detail::check_shape(op, "dst_score", dst_score, a.num_rows, spec.heads);
  detail::check_device(op, "src_score", src_score, h.device);
  detail::check_device(op, "dst_score", dst_score, h.device);
  detail::check_attention_ids(op, ids, a.num_rows, a.num_cols, h.device);
}

template <class I>
void forward_checked(const graph::CsrView<I>& a, ConstTensorView h, ConstTensorView src_score,
                     ConstTensorView dst_score, const AttentionSpec& spec, AttentionIds ids, TensorView out,
                     TensorView row_max, TensorView row_sum) {
  constexpr const char* op = "attention_forward";
  check_operands(op, a, h, src_score, dst_score, spec, ids);
  detail::check_shape(op, "out", out, a.num_rows, h.cols);
  detail::check_shape(op, "row_max", row_max, a.num_rows, spec.heads);
  detail::check_shape(op, "row_sum", row_sum, a.num_rows, spec.heads);
  for (const TensorView* v : {&out, &row_max, &row_sum}) detail::check_device(op, "an output", *v, h.device);
  HALO_KERNEL_EXPECTS(op, !detail::overlaps(h, out), "out may not overlap h");
  ScopedKernelTimer timer(KernelFamily::spmm, h.device);
  if (h.device.is_cuda()) {
    require_device(h.device);
    cuda::attention_forward(a, h, src_score, dst_score, spec, ids, out, row_max, row_sum);
    return;
  }
  cpu::attention_forward(a, h, src_score, dst_score, spec, ids, out, row_max, row_sum);
}

template <class I>
void backward_checked(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView h,
                      ConstTensorView src_score, ConstTensorView dst_score, const AttentionSpec& spec, AttentionIds ids,
                      ConstTensorView row_max, ConstTensorView row_sum, ConstTensorView grad_out, TensorView grad_h,
                      TensorView grad_src_score, TensorView grad_dst_score) {
  constexpr const char* op = "attention_backward";
  check_operands(op, a, h, src_score, dst_score, spec, ids);
  detail::check_transpose(op, a, at);
  detail::check_shape(op, "row_max", row_max, a.num_rows, spec.heads);
  detail::check_shape(op, "row_sum", row_sum, a.num_rows, spec.heads);
  detail::check_shape(op, "grad_out", grad_out, a.num_rows, h.cols);
  detail::check_shape(op, "grad_h", grad_h, a.num_cols, h.cols);
  detail::check_shape(op, "grad_src_score", grad_src_score, a.num_cols, spec.heads);
  detail::check_shape(op, "grad_dst_score", grad_dst_score, a.num_rows, spec.heads);
  for (const ConstTensorView* v : {&row_max, &row_sum, &grad_out}) detail::check_device(op, "an input", *v, h.device);
  for (const TensorView* v : {&grad_h, &grad_src_score, &grad_dst_score})
    detail::check_device(op, "an output", *v, h.device);
  for (const TensorView* v : {&grad_h, &grad_src_score, &grad_dst_score})
    HALO_KERNEL_EXPECTS(op,
                        !detail::overlaps(*v, h) && !detail::overlaps(*v, grad_out) &&
                            !detail::overlaps(*v, src_score) && !detail::overlaps(*v, dst_score),
                        "the gradients may not overlap the inputs");
  ScopedKernelTimer timer(KernelFamily::spmm, h.device);
  if (h.device.is_cuda()) {
    require_device(h.device);
    cuda::attention_backward(a, at, h, src_score, dst_score, spec, ids, row_max, row_sum, grad_out, grad_h,
                             grad_src_score, grad_dst_score);
    return;
  }
  cpu::attention_backward(a, at, h, src_score, dst_score, spec, ids, row_max, row_sum, grad_out, grad_h, grad_src_score,
                          grad_dst_score);
}

void check_heads(const char* op, ConstTensorView h, ConstTensorView a) {
  detail::check_view(op, "h", h);
  detail::check_view(op, "a", a);
  HALO_KERNEL_EXPECTS(op, a.rows >= 1 && a.rows * a.cols == h.cols,
                      "a must be heads x width with heads · width = h's " + std::to_string(h.cols) + " columns, got " +
                          detail::dims(a.rows, a.cols));
  detail::check_device(op, "a", a, h.device);
}

}  // namespace

void attention_forward(const graph::CsrView<std::int32_t>& a, ConstTensorView h, ConstTensorView src_score,
                       ConstTensorView dst_score, const AttentionSpec& spec, AttentionIds ids, TensorView out,
                       TensorView row_max, TensorView row_sum) {
  forward_checked(a, h, src_score, dst_score, spec, ids, out, row_max, row_sum);
}
void attention_forward(const graph::CsrView<std::int64_t>& a, ConstTensorView h, ConstTensorView src_score,
                       ConstTensorView dst_score, const AttentionSpec& spec, AttentionIds ids, TensorView out,
                       TensorView row_max, TensorView row_sum) {
  forward_checked(a, h, src_score, dst_score, spec, ids, out, row_max, row_sum);
}

void attention_backward(const graph::CsrView<std::int32_t>& a, const graph::CsrView<std::int32_t>& at,
                        ConstTensorView h, ConstTensorView src_score, ConstTensorView dst_score,
                        const AttentionSpec& spec, AttentionIds ids, ConstTensorView row_max, ConstTensorView row_sum,
                        ConstTensorView grad_out, TensorView grad_h, TensorView grad_src_score,
                        TensorView grad_dst_score) {
  backward_checked(a, at, h, src_score, dst_score, spec, ids, row_max, row_sum, grad_out, grad_h, grad_src_score,
                   grad_dst_score);
}
void attention_backward(const graph::CsrView<std::int64_t>& a, const graph::CsrView<std::int64_t>& at,
                        ConstTensorView h, ConstTensorView src_score, ConstTensorView dst_score,
                        const AttentionSpec& spec, AttentionIds ids, ConstTensorView row_max, ConstTensorView row_sum,
                        ConstTensorView grad_out, TensorView grad_h, TensorView grad_src_score,
                        TensorView grad_dst_score) {
  backward_checked(a, at, h, src_score, dst_score, spec, ids, row_max, row_sum, grad_out, grad_h, grad_src_score,
                   grad_dst_score);
}

void head_scores(ConstTensorView h, ConstTensorView a, TensorView score) {
  constexpr const char* op = "head_scores";
  check_heads(op, h, a);
  detail::check_shape(op, "score", score, h.rows, a.rows);
  detail::check_device(op, "score", score, h.device);
  ScopedKernelTimer timer(KernelFamily::other, h.device);
  if (h.device.is_cuda()) {
    require_device(h.device);
    cuda::head_scores(h, a, score);
    return;
  }
  cpu::head_scores(h, a, score);
}

void head_scores_backward(ConstTensorView h, ConstTensorView a, ConstTensorView grad_score, TensorView grad_h,
                          TensorView grad_a) {
  constexpr const char* op = "head_scores_backward";
  check_heads(op, h, a);
  detail::check_shape(op, "grad_score", grad_score, h.rows, a.rows);
  detail::check_shape(op, "grad_h", grad_h, h.rows, h.cols);
  detail::check_shape(op, "grad_a", grad_a, a.rows, a.cols);
  detail::check_device(op, "grad_score", grad_score, h.device);
  detail::check_device(op, "grad_h", grad_h, h.device);
  detail::check_device(op, "grad_a", grad_a, h.device);
  HALO_KERNEL_EXPECTS(op, !detail::overlaps(grad_h, h) && !detail::overlaps(grad_a, a),
                      "the gradients may not overlap the inputs");
  ScopedKernelTimer timer(KernelFamily::other, h.device);
  if (h.device.is_cuda()) {
    require_device(h.device);
    cuda::head_scores_backward(h, a, grad_score, grad_h, grad_a);
    return;
  }
  cpu::head_scores_backward(h, a, grad_score, grad_h, grad_a);
}

}  // namespace halo::kernels
