// Dot-product attention dispatch: checks the operands, times the call, and runs the CPU or CUDA twin.
#include "kernels/dot_attention.hpp"

#include <string>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/attention_checks.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {
namespace {

// The operands both directions share: the query, keys and values, the head count, the dropout.
template <class I>
void check_operands(const char* op, const graph::CsrView<I>& a, ConstTensorView query, ConstTensorView keys,
                    ConstTensorView values, const DotAttentionSpec& spec, AttentionIds ids) {
  detail::check_csr(op, "the CSR", a);
  detail::check_view(op, "query", query);
  detail::check_view(op, "keys", keys);
  detail::check_view(op, "values", values);
  HALO_KERNEL_EXPECTS(op, spec.heads >= 1 && keys.cols % spec.heads == 0 && values.cols % spec.heads == 0,
                      "heads must divide the keys' " + std::to_string(keys.cols) + " and the values' " +
                          std::to_string(values.cols) + " columns, got " + std::to_string(spec.heads));
  HALO_KERNEL_EXPECTS(op, spec.dropout >= 0.0f && spec.dropout < 1.0f,
                      "attention dropout must be in [0, 1), got " + std::to_string(spec.dropout));
  detail::check_shape(op, "query", query, a.num_rows, keys.cols);
  detail::check_shape(op, "keys", keys, a.num_cols, keys.cols);
  detail::check_shape(op, "values", values, a.num_cols, values.cols);
  detail::check_device(op, "keys", keys, query.device);
  detail::check_device(op, "values", values, query.device);
  detail::check_attention_ids(op, ids, a.num_rows, a.num_cols, query.device);
}

template <class I>
void forward_checked(const graph::CsrView<I>& a, ConstTensorView query, ConstTensorView keys, ConstTensorView values,
                     const DotAttentionSpec& spec, AttentionIds ids, TensorView out, TensorView row_max,
                     TensorView row_sum) {
  constexpr const char* op = "dot_attention_forward";
  check_operands(op, a, query, keys, values, spec, ids);
  detail::check_shape(op, "out", out, a.num_rows, values.cols);
  detail::check_shape(op, "row_max", row_max, a.num_rows, spec.heads);
  detail::check_shape(op, "row_sum", row_sum, a.num_rows, spec.heads);
  for (const TensorView* v : {&out, &row_max, &row_sum}) {
    detail::check_device(op, "an output", *v, query.device);
    HALO_KERNEL_EXPECTS(op,
                        !detail::overlaps(*v, query) && !detail::overlaps(*v, keys) && !detail::overlaps(*v, values),
                        "the outputs may not overlap the inputs");
  }
  ScopedKernelTimer timer(KernelFamily::spmm, query.device);
  if (query.device.is_cuda()) {
    require_device(query.device);
    cuda::dot_attention_forward(a, query, keys, values, spec, ids, out, row_max, row_sum);
    return;
  }
  cpu::dot_attention_forward(a, query, keys, values, spec, ids, out, row_max, row_sum);
}

template <class I>
void backward_checked(const graph::CsrView<I>& a, const graph::CsrView<I>& at, ConstTensorView query,
                      ConstTensorView keys, ConstTensorView values, const DotAttentionSpec& spec, AttentionIds ids,
                      ConstTensorView row_max, ConstTensorView row_sum, ConstTensorView grad_out,
                      TensorView grad_query, TensorView grad_keys, TensorView grad_values) {
  constexpr const char* op = "dot_attention_backward";
  check_operands(op, a, query, keys, values, spec, ids);
  detail::check_transpose(op, a, at);
  detail::check_shape(op, "row_max", row_max, a.num_rows, spec.heads);
  detail::check_shape(op, "row_sum", row_sum, a.num_rows, spec.heads);
  detail::check_shape(op, "grad_out", grad_out, a.num_rows, values.cols);
  detail::check_shape(op, "grad_query", grad_query, a.num_rows, keys.cols);
  detail::check_shape(op, "grad_keys", grad_keys, a.num_cols, keys.cols);
  detail::check_shape(op, "grad_values", grad_values, a.num_cols, values.cols);
  for (const ConstTensorView* v : {&row_max, &row_sum, &grad_out})
    detail::check_device(op, "an input", *v, query.device);
  for (const TensorView* v : {&grad_query, &grad_keys, &grad_values}) {
    detail::check_device(op, "an output", *v, query.device);
    HALO_KERNEL_EXPECTS(op,
                        !detail::overlaps(*v, query) && !detail::overlaps(*v, keys) && !detail::overlaps(*v, values) &&
                            !detail::overlaps(*v, grad_out),
                        "the gradients may not overlap the inputs");
  }
  ScopedKernelTimer timer(KernelFamily::spmm, query.device);
  if (query.device.is_cuda()) {
    require_device(query.device);
    cuda::dot_attention_backward(a, at, query, keys, values, spec, ids, row_max, row_sum, grad_out, grad_query,
                                 grad_keys, grad_values);
    return;
  }
  cpu::dot_attention_backward(a, at, query, keys, values, spec, ids, row_max, row_sum, grad_out, grad_query, grad_keys,
                              grad_values);
}

}  // namespace

void dot_attention_forward(const graph::CsrView<std::int32_t>& a, ConstTensorView query, ConstTensorView keys,
                           ConstTensorView values, const DotAttentionSpec& spec, AttentionIds ids, TensorView out,
                           TensorView row_max, TensorView row_sum) {
  forward_checked(a, query, keys, values, spec, ids, out, row_max, row_sum);
}
void dot_attention_forward(const graph::CsrView<std::int64_t>& a, ConstTensorView query, ConstTensorView keys,
                           ConstTensorView values, const DotAttentionSpec& spec, AttentionIds ids, TensorView out,
                           TensorView row_max, TensorView row_sum) {
  forward_checked(a, query, keys, values, spec, ids, out, row_max, row_sum);
}

void dot_attention_backward(const graph::CsrView<std::int32_t>& a, const graph::CsrView<std::int32_t>& at,
                            ConstTensorView query, ConstTensorView keys, ConstTensorView values,
                            const DotAttentionSpec& spec, AttentionIds ids, ConstTensorView row_max,
                            ConstTensorView row_sum, ConstTensorView grad_out, TensorView grad_query,
                            TensorView grad_keys, TensorView grad_values) {
  backward_checked(a, at, query, keys, values, spec, ids, row_max, row_sum, grad_out, grad_query, grad_keys,
                   grad_values);
}
void dot_attention_backward(const graph::CsrView<std::int64_t>& a, const graph::CsrView<std::int64_t>& at,
                            ConstTensorView query, ConstTensorView keys, ConstTensorView values,
                            const DotAttentionSpec& spec, AttentionIds ids, ConstTensorView row_max,
                            ConstTensorView row_sum, ConstTensorView grad_out, TensorView grad_query,
                            TensorView grad_keys, TensorView grad_values) {
  backward_checked(a, at, query, keys, values, spec, ids, row_max, row_sum, grad_out, grad_query, grad_keys,
                   grad_values);
}

}  // namespace halo::kernels
