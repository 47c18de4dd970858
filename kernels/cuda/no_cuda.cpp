// The CUDA kernels' entry points in a build without CUDA. The dispatch functions refuse GPU
// operands before calling them (require_device), so these only keep the program linkable; each
// throws UnsupportedError all the same.
#include <string>

#include "graph/base/error.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/gpu_info.hpp"

namespace halo::kernels::cuda {
namespace {
[[noreturn]] void missing(const char* op) {
  throw UnsupportedError(std::string(op) + ": this halo was built without CUDA (configure with -DHALO_WITH_CUDA=ON)");
}
}  // namespace

void require_host_memory(const char*, const char*, const void*, int) {}
GpuInfo gpu_info(int) { missing("gpu_info"); }
std::int64_t gpu_usable_bytes(int) { missing("gpu_usable_bytes"); }
void spmm(const graph::CsrView<std::int32_t>&, ConstTensorView, TensorView, Accumulate) { missing("spmm"); }
void spmm(const graph::CsrView<std::int64_t>&, ConstTensorView, TensorView, Accumulate) { missing("spmm"); }
std::optional<SpmmImpl> spmm_choice(std::uint64_t, std::int64_t) { return std::nullopt; }
void forget_spmm_graph(std::uint64_t) noexcept {}
std::int64_t cusparse_state_bytes() { return 0; }
void gemm(ConstTensorView, Transpose, ConstTensorView, Transpose, TensorView, float, float) { missing("gemm"); }
void segmented_gemm(const std::vector<GemmSegment>&, Transpose, Transpose, float, float) { missing("segmented_gemm"); }
void gather_rows(ConstTensorView, const DeviceIndex&, TensorView) { missing("gather_rows"); }
void scatter_add_rows(ConstTensorView, const DeviceIndex&, TensorView) { missing("scatter_add_rows"); }
void add_bias(TensorView, ConstTensorView) { missing("add_bias"); }
void column_sums(ConstTensorView, TensorView, bool) { missing("column_sums"); }
template <class I>
void attention_forward(const graph::CsrView<I>&, ConstTensorView, ConstTensorView, ConstTensorView,
                       const AttentionSpec&, AttentionIds, TensorView, TensorView, TensorView) {
  missing("attention_forward");
}
template <class I>
void attention_backward(const graph::CsrView<I>&, const graph::CsrView<I>&, ConstTensorView, ConstTensorView,
                        ConstTensorView, const AttentionSpec&, AttentionIds, ConstTensorView, ConstTensorView,
                        ConstTensorView, TensorView, TensorView, TensorView) {
  missing("attention_backward");
}
template void attention_forward(const graph::CsrView<std::int32_t>&, ConstTensorView, ConstTensorView,
                                ConstTensorView, const AttentionSpec&, AttentionIds, TensorView, TensorView,
                                TensorView);
template void attention_forward(const graph::CsrView<std::int64_t>&, ConstTensorView, ConstTensorView,
                                ConstTensorView, const AttentionSpec&, AttentionIds, TensorView, TensorView,
                                TensorView);
template void attention_backward(const graph::CsrView<std::int32_t>&, const graph::CsrView<std::int32_t>&,
                                 ConstTensorView, ConstTensorView, ConstTensorView, const AttentionSpec&, AttentionIds,
                                 ConstTensorView, ConstTensorView, ConstTensorView, TensorView, TensorView, TensorView);
template void attention_backward(const graph::CsrView<std::int64_t>&, const graph::CsrView<std::int64_t>&,
                                 ConstTensorView, ConstTensorView, ConstTensorView, const AttentionSpec&, AttentionIds,
                                 ConstTensorView, ConstTensorView, ConstTensorView, TensorView, TensorView, TensorView);
template <class I>
void dot_attention_forward(const graph::CsrView<I>&, ConstTensorView, ConstTensorView, ConstTensorView,
                           const DotAttentionSpec&, AttentionIds, TensorView, TensorView, TensorView) {
  missing("dot_attention_forward");
}
template <class I>
void dot_attention_backward(const graph::CsrView<I>&, const graph::CsrView<I>&, ConstTensorView, ConstTensorView,
                            ConstTensorView, const DotAttentionSpec&, AttentionIds, ConstTensorView, ConstTensorView,
                            ConstTensorView, TensorView, TensorView, TensorView) {
  missing("dot_attention_backward");
}
template void dot_attention_forward(const graph::CsrView<std::int32_t>&, ConstTensorView, ConstTensorView,
                                    ConstTensorView, const DotAttentionSpec&, AttentionIds, TensorView, TensorView,
                                    TensorView);
template void dot_attention_forward(const graph::CsrView<std::int64_t>&, ConstTensorView, ConstTensorView,
                                    ConstTensorView, const DotAttentionSpec&, AttentionIds, TensorView, TensorView,
                                    TensorView);
template void dot_attention_backward(const graph::CsrView<std::int32_t>&, const graph::CsrView<std::int32_t>&,
                                     ConstTensorView, ConstTensorView, ConstTensorView, const DotAttentionSpec&,
                                     AttentionIds, ConstTensorView, ConstTensorView, ConstTensorView, TensorView,
                                     TensorView, TensorView);
template void dot_attention_backward(const graph::CsrView<std::int64_t>&, const graph::CsrView<std::int64_t>&,
                                     ConstTensorView, ConstTensorView, ConstTensorView, const DotAttentionSpec&,
                                     AttentionIds, ConstTensorView, ConstTensorView, ConstTensorView, TensorView,
                                     TensorView, TensorView);
void head_scores(ConstTensorView, ConstTensorView, TensorView) { missing("head_scores"); }
void head_scores_backward(ConstTensorView, ConstTensorView, ConstTensorView, TensorView, TensorView) {
  missing("head_scores_backward");
}
void elu_forward(ConstTensorView, TensorView) { missing("elu_forward"); }
void elu_backward(ConstTensorView, ConstTensorView, TensorView) { missing("elu_backward"); }
void gelu_forward(ConstTensorView, TensorView) { missing("gelu_forward"); }
void gelu_backward(ConstTensorView, ConstTensorView, TensorView) { missing("gelu_backward"); }
void relu_forward(ConstTensorView, TensorView) { missing("relu_forward"); }
void relu_backward(ConstTensorView, ConstTensorView, TensorView, float) { missing("relu_backward"); }
void narrow_to_bf16(ConstTensorView, std::uint16_t*, std::int64_t) { missing("narrow_to_bf16"); }
void widen_bf16(Bf16View, TensorView) { missing("widen_bf16"); }
void relu_backward_bf16(Bf16View, ConstTensorView, TensorView, float) { missing("relu_backward_bf16"); }
void elu_backward_bf16(Bf16View, ConstTensorView, TensorView) { missing("elu_backward_bf16"); }
void axpby(float, ConstTensorView, float, TensorView) { missing("axpby"); }
void normalize_rows(TensorView) { missing("normalize_rows"); }
double sum_of_products(ConstTensorView, ConstTensorView) { missing("sum_of_products"); }
void dropout(ConstTensorView, TensorView, float, DropoutKey, const std::int64_t*) { missing("dropout"); }
void bias_relu_dropout(TensorView, ConstTensorView, float, DropoutKey, const std::int64_t*) {
  missing("bias_relu_dropout");
}
LossSum log_softmax_nll(ConstTensorView, const std::int64_t*, IndexView, float, TensorView) {
  missing("log_softmax_nll");
}
std::int64_t count_correct(ConstTensorView, const std::int64_t*, IndexView) { missing("count_correct"); }
LossSum log_softmax_nll_prepared(ConstTensorView, const std::int64_t*, const std::int64_t*, std::int64_t, float,
                                 TensorView) {
  missing("log_softmax_nll_prepared");
}
std::int64_t count_correct_prepared(ConstTensorView, const std::int64_t*, const std::int64_t*, std::int64_t) {
  missing("count_correct_prepared");
}
LossSum sigmoid_bce(ConstTensorView, const std::int64_t*, IndexView, float, TensorView) { missing("sigmoid_bce"); }
void batch_norm_sums(ConstTensorView, TensorView) { missing("batch_norm_sums"); }
void batch_norm_statistics(ConstTensorView, double, float, float, TensorView, TensorView, TensorView) {
  missing("batch_norm_statistics");
}
void batch_norm_running_statistics(ConstTensorView, ConstTensorView, float, TensorView) {
  missing("batch_norm_running_statistics");
}
void batch_norm_forward(ConstTensorView, ConstTensorView, ConstTensorView, ConstTensorView, TensorView) {
  missing("batch_norm_forward");
}
void batch_norm_backward_sums(ConstTensorView, ConstTensorView, ConstTensorView, TensorView) {
  missing("batch_norm_backward_sums");
}
void batch_norm_backward(ConstTensorView, ConstTensorView, ConstTensorView, ConstTensorView, ConstTensorView, double,
                         TensorView, TensorView, TensorView) {
  missing("batch_norm_backward");
}
void adam_step(TensorView, ConstTensorView, TensorView, TensorView, const AdamHyper&, std::int64_t) {
  missing("adam_step");
}
void adam_step_rows(TensorView, ConstTensorView, TensorView, TensorView, IndexView, const std::int64_t*,
                    const AdamHyper&) {
  missing("adam_step_rows");
}
void sgd_step(TensorView, ConstTensorView, TensorView, const SgdHyper&, std::int64_t) { missing("sgd_step"); }

}  // namespace halo::kernels::cuda
