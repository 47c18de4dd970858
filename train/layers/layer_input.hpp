// LayerInput: what a graph convolution multiplies. Every layer's input is a resident tensor,
// except possibly the first layer's: its features may be streamed in row chunks through a
// FeaturePipeline (issue #7), and its first aggregation Â·x may have been computed once before
// training. GcnConv and SageConv are written once against LayerInput (GraphConv), so the
// streamed first layer runs the same layer maths as every other.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "kernels/bf16_rows.hpp"
#include "kernels/tensor.hpp"
#include "train/features/feature_pipeline.hpp"
#include "train/layers/activation.hpp"
#include "train/layers/layer.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/step.hpp"

namespace halo::train {

// Writes rows [first_row, first_row + chunk.rows) of a resident float32 matrix (`source`: those
// rows) into a float32 chunk, transformed on the way: a copy and a transform in one pass.
using ChunkReader =
    std::function<void(kernels::ConstTensorView source, kernels::TensorView chunk, std::int64_t first_row)>;

// One matrix x that a layer multiplies, wherever it lives: a resident tensor, a resident
// bfloat16 copy (an activation kept at half the bytes, widened chunk by chunk for each product),
// or the rows of a FeaturePipeline's source; each with an optional per-chunk transform (a
// dropout, a row normalisation) applied as the rows are read, so that the transformed matrix is
// never stored. A cheap handle (a pointer and a std::function): copies share what it points at.
class InputMatrix {
 public:
  // out = x · w over the first out.rows rows of x.
  struct Product {
    kernels::ConstTensorView w;
    kernels::TensorView out;
  };
  // grad_weight += xᵀ · grad over the first grad.rows rows of x.
  struct TransposedProduct {
    kernels::ConstTensorView grad;
    kernels::TensorView grad_weight;
  };

  // No matrix.
  InputMatrix() = default;
  // A resident tensor, kept alive and unchanged by the caller while the handle is used.
  explicit InputMatrix(const kernels::Tensor& x);
  // A resident float32 view (its memory kept alive and unchanged by the caller while the handle
  // is used). The same products as a tensor's; tensor() refuses it.
  explicit InputMatrix(kernels::ConstTensorView x);
  // A resident bfloat16 matrix, kept alive and unchanged by the caller while the handle is used.
  explicit InputMatrix(const kernels::Bf16Rows& x);
  // The source rows of `pipeline` (kept alive by the caller) with `transform` (may be empty)
  // applied to every chunk before it is multiplied.
  InputMatrix(FeaturePipeline& pipeline, RowTransform transform);

  bool empty() const { return !resident_ && bf16_ == nullptr && pipeline_ == nullptr; }
  // A resident float32 matrix that each product reads whole (one GEMM); otherwise every product
  // takes a pass over x's chunks, so a layer gathers its products into few passes.
  bool read_whole() const { return resident_ && !transform_ && !reader_; }
  bool streamed() const { return pipeline_ != nullptr; }
  std::int64_t rows() const;
  std::int64_t cols() const;
  // Rows per chunk of a streaming pass (the pipeline's; resident_chunk_rows for a resident matrix
  // read through a float32 scratch), or all rows for a float32 tensor read whole.
  std::int64_t chunk_rows() const;

  // The resident tensor. Throws UnsupportedError when streamed, in bfloat16, transformed, a view
  // or the first rows of a matrix (or empty), saying that `what` needs the whole float32 matrix.
  const kernels::Tensor& tensor(const std::string& what) const;
  // Its first n rows (0 <= n <= rows()), transform included (a chunk keeps its row numbers in x):
  // a layer reading only the owned rows of an input that has halo rows after them. A streamed
  // matrix has no such view (UnsupportedError unless n = rows()).
  InputMatrix first_rows(std::int64_t n) const;
  // The same matrix with `more` applied to each chunk after this one's transform (first_row: the
  // chunk's first row in x). A resident matrix with a transform is read chunk by chunk.
  InputMatrix then(RowTransform more) const;
  // The same resident float32 matrix read chunk by chunk through `reader`, which writes each
  // chunk's values into the scratch in place of the copy (a dropout, which copies anyway). Refused
  // (InvalidArgument) for a matrix that is not a resident float32 one or already reads through a
  // reader or a transform.
  InputMatrix read_with(ChunkReader reader) const;

  // out = x · w + beta · out (out: rows x w.cols; w: cols x w.cols). A float32 tensor without a
  // transform: one GEMM, exactly kernels::gemm(x, w, out, 1, beta). Streamed: one pass over x,
  // one GEMM per chunk into its rows of out (rows do not mix, so the values differ from the
  // resident GEMM only by the kernel's float32 rounding for the chunk's shape). Bfloat16 or
  // transformed: the same, each chunk widened or copied into a float32 scratch of chunk_rows()
  // rows and transformed first. Deterministic for a fixed thread count.
  void multiply(kernels::ConstTensorView w, kernels::TensorView out, float beta = 0.0f) const;
  // x · w as a new tensor (rows x w.cols, on w's device).
  kernels::Tensor multiply(kernels::ConstTensorView w) const;
  // out = x · w over the first out.rows rows of x (at most rows()) for every product. A float32
  // tensor without a transform: one GEMM each, exactly multiply's. Otherwise ONE pass over x for
  // all of them, each chunk read (and transformed) once and multiplied into every product's rows,
  // as multiply does for one.
  void multiply_each(const std::vector<Product>& products) const;
  // grad_weight += xᵀ · grad over the first grad.rows rows of x (at most rows()) for every
  // product. A float32 tensor without a transform: one GEMM each. Otherwise ONE pass over x for
  // all of them, the sum over rows taken chunk by chunk in row order (float32 rounding per
  // chunk), a resident matrix's chunks through the scratch as in multiply. Deterministic for a
  // fixed thread count and chunk size.
  void add_transposed_products(const std::vector<TransposedProduct>& products) const;

 private:
  // A resident matrix read through a float32 scratch: in bfloat16, or with a transform.
  bool read_by_chunk() const { return bf16_ != nullptr || (resident_ && (transform_ || reader_)); }

  // Calls fn(chunk, first_row) for the float32 chunks of such a matrix, in row order: each
  // widened or copied into one scratch, then transformed.
  template <class F>
  void for_scratch_chunks(F&& fn) const;
  // Calls fn(chunk, first_row) for every float32 chunk of x, in row order: a resident matrix's
  // through for_scratch_chunks, a streamed one's as its pipeline stages and transforms them.
  template <class F>
  void for_each_chunk(F&& fn) const;

  bool resident_ = false;  // a resident float32 matrix: view_
  kernels::ConstTensorView view_;
  const kernels::Tensor* tensor_ = nullptr;  // the tensor view_ is, when made from one and whole
  const kernels::Bf16Rows* bf16_ = nullptr;
  std::int64_t bf16_rows_ = 0;  // of a bfloat16 matrix: the rows read (first_rows)
  FeaturePipeline* pipeline_ = nullptr;
  ChunkReader reader_;
  RowTransform transform_;
};

// Rows per chunk of a rows x cols resident InputMatrix read through a float32 scratch (about
// 4 MiB: each of two threads' halves fits its L2 when the chunk's GEMM reads it, and a pass
// starts few enough parallel regions (copy, transform, GEMM per chunk) that they cost little;
// 1 MiB chunks made RGAT's epoch on dblp with input dropout 1.17x as long): its products hold
// one such scratch while they run, chunk_rows x cols floats.
std::int64_t resident_chunk_rows(std::int64_t rows, std::int64_t cols);

// A layer's input: x itself and, for a first layer with --precompute-first-aggregation, its
// aggregation Â·x computed once before training (then x may be absent: a GCN layer no longer
// needs it, GraphSAGE's root term does).
struct LayerInput {
  InputMatrix x;
  InputMatrix aggregated;

  LayerInput() = default;
  // A resident tensor x (implicit: every hidden layer's input is one).
  LayerInput(const kernels::Tensor& tensor) : x(tensor) {}  // NOLINT(google-explicit-constructor)
  LayerInput(InputMatrix features, InputMatrix aggregate) : x(std::move(features)), aggregated(std::move(aggregate)) {}

  bool precomputed() const { return !aggregated.empty(); }
  bool streamed() const { return x.streamed() || aggregated.streamed(); }
  std::int64_t rows() const { return x.empty() ? aggregated.rows() : x.rows(); }
  std::int64_t cols() const { return x.empty() ? aggregated.cols() : x.cols(); }
};

// Whether a graph convolution of in_dim -> out_dim aggregates first, (Â·x)·W, rather than
// Â·(x·W): when in_dim < out_dim, so the SpMM (and a halo exchange) carries the narrower side. At
// equal widths both orders cost the same SpMM and GEMM, and transforming first keeps nothing for
// backward (x is the caller's) where aggregating first keeps Â·x, a tensor of the layer's width.
// GcnConv and SageConv follow this rule, and the memory plan (ModelShape) reads it.
inline bool conv_aggregates_first(std::int64_t in_dim, std::int64_t out_dim) { return out_dim > in_dim; }
// Bytes such a convolution keeps from forward to backward for `vertices` rows: Â·x (vertices x
// in_dim floats) when it aggregates first, else nothing (views of its input are the caller's).
inline std::int64_t conv_saved_bytes(std::int64_t in_dim, std::int64_t out_dim, std::int64_t vertices) {
  return conv_aggregates_first(in_dim, out_dim) ? vertices * in_dim * static_cast<std::int64_t>(sizeof(float)) : 0;
}

// A graph convolution (GcnConv, SageConv): a Layer whose forward also takes a LayerInput.
class GraphConv : public Layer {
 public:
  // y = f(x). In training the layer keeps `x` (its handles: the caller keeps the tensors alive
  // and unchanged, the pipelines alive, until backward) and backward multiplies by it again.
  // A streamed x is transformed first (Â·(x·W)): aggregating it first would need every row at
  // once. Precomputing Â·x instead saves that layer's SpMM.
  virtual kernels::Tensor forward(const LayerInput& x, const Step& step) = 0;
  kernels::Tensor forward(const kernels::Tensor& x, const Step& step) final { return forward(LayerInput(x), step); }

  // True when forward aggregates before transforming a resident x, (Â·x)·W.
  virtual bool aggregates_first() const = 0;

  // Aggregating first in training, keep nothing but the handles of x (the caller's) and compute
  // Â·x again in backward: vertices x in_dim floats less from forward to backward, for one more
  // SpMM of in_dim columns (and, distributed, its halo exchange). The SpMM is deterministic, so
  // the gradients are bitwise those of the kept Â·x. Off by default.
  void set_recompute_aggregation(bool on) { recompute_aggregation_ = on; }
  bool recompute_aggregation() const { return recompute_aggregation_; }

  // Aggregating first in training and keeping Â·x, keep it in bfloat16 (half the bytes): the
  // forward multiplies the float32 Â·x, the weight's gradient reads the rounded one, widened chunk
  // by chunk (--activation-dtype bf16). Off by default.
  void set_keep_aggregation_bf16(bool on) { keep_aggregation_bf16_ = on; }
  bool keep_aggregation_bf16() const { return keep_aggregation_bf16_; }

  // What a convolution of in_dim -> out_dim keeps of its own for `vertices` rows: Â·x when it
  // aggregates first (conv_saved_bytes; in bfloat16 with keep_aggregation_bf16), nothing when it
  // recomputes it.
  std::int64_t aggregation_saved_bytes(std::int64_t in_dim, std::int64_t out_dim, std::int64_t vertices) const;

  // Forward ends with ReLU and then `dropout` (when given and active) in place, in the pass that
  // adds the bias (bias_relu_dropout): the conv's output is the next layer's dropped input, and
  // backward takes the gradient of the output before the epilogue (the caller applies
  // relu_dropout_backward from that output). `dropout` must outlive the layer. Off by default:
  // the bias alone.
  void set_relu_epilogue(const Dropout* dropout) {
    relu_epilogue_ = true;
    epilogue_dropout_ = dropout;
  }

 protected:
  // Adds `bias` (when given) to forward's output y and applies the epilogue, in one pass.
  void finish_output(kernels::Tensor& y, const Parameter* bias, const Step& step) const;

 private:
  bool recompute_aggregation_ = false;
  bool keep_aggregation_bf16_ = false;
  bool relu_epilogue_ = false;
  const Dropout* epilogue_dropout_ = nullptr;
};

}  // namespace halo::train
