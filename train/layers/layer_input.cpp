// InputMatrix: the products of a layer input with a weight, by one GEMM on a resident tensor, by
// one pass over a resident matrix widened (bfloat16) or copied and transformed chunk by chunk,
// or by one streaming pass over the pipeline's chunks.
#include "train/layers/layer_input.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "graph/base/error.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"

namespace halo::train {

using kernels::ConstTensorView;
using kernels::Tensor;
using kernels::TensorView;
using kernels::Transpose;

namespace {

std::string shape(std::int64_t rows, std::int64_t cols) { return std::to_string(rows) + " x " + std::to_string(cols); }

}  // namespace

InputMatrix::InputMatrix(const Tensor& x) : resident_(true), view_(x.view()), tensor_(&x) {}

InputMatrix::InputMatrix(ConstTensorView x) : resident_(true), view_(x) {}

InputMatrix::InputMatrix(const kernels::Bf16Rows& x) : bf16_(&x), bf16_rows_(x.rows()) {}

std::int64_t resident_chunk_rows(std::int64_t rows, std::int64_t cols) {
  constexpr std::int64_t chunk_bytes = std::int64_t{4} << 20;
  return std::max<std::int64_t>(1, std::min(rows, chunk_bytes / (std::max<std::int64_t>(cols, 1) * 4)));
}

template <class F>
void InputMatrix::for_scratch_chunks(F&& fn) const {
  const std::int64_t n = rows(), cols = this->cols();
  const std::int64_t chunk = resident_chunk_rows(n, cols);
  Tensor scratch = Tensor::empty(std::min(chunk, n), cols, bf16_ != nullptr ? bf16_->device() : view_.device);
  for (std::int64_t begin = 0; begin < n; begin += chunk) {
    const std::int64_t end = std::min(n, begin + chunk);
    const TensorView rows_here = scratch.view().slice_rows(0, end - begin);
    if (bf16_ != nullptr)
      kernels::widen(bf16_->view().slice_rows(begin, end), rows_here);
    else if (reader_)
      reader_(view_.slice_rows(begin, end), rows_here, begin);
    else
      kernels::copy(view_.slice_rows(begin, end), rows_here);
    if (transform_) transform_(rows_here, begin);
    fn(ConstTensorView(rows_here), begin);
  }
}

template <class F>
void InputMatrix::for_each_chunk(F&& fn) const {
  if (read_by_chunk())
    for_scratch_chunks(fn);
  else
    pipeline_->stream(transform_,
                      [&](TensorView chunk, std::int64_t first_row) { fn(ConstTensorView(chunk), first_row); });
}

InputMatrix::InputMatrix(FeaturePipeline& pipeline, RowTransform transform)
    : pipeline_(&pipeline), transform_(std::move(transform)) {}

std::int64_t InputMatrix::rows() const {
  if (resident_) return view_.rows;
  if (bf16_ != nullptr) return bf16_rows_;
  return pipeline_ != nullptr ? pipeline_->rows() : 0;
}

std::int64_t InputMatrix::chunk_rows() const {
  if (read_by_chunk()) return resident_chunk_rows(rows(), cols());
  return pipeline_ != nullptr ? pipeline_->chunk_rows() : rows();
}

std::int64_t InputMatrix::cols() const {
  if (resident_) return view_.cols;
  if (bf16_ != nullptr) return bf16_->cols();
  return pipeline_ != nullptr ? pipeline_->cols() : 0;
}

const Tensor& InputMatrix::tensor(const std::string& what) const {
  if (bf16_ != nullptr)
    throw UnsupportedError(what +
                           " needs its input whole in float32, but the input is kept in bfloat16 "
                           "(--activation-dtype bf16 keeps only the inputs of layers that transform first so)");
  if (resident_ && (transform_ || reader_))
    throw UnsupportedError(what +
                           " needs its input whole, but the input is transformed (dropped) chunk by chunk as it is "
                           "read (only the inputs of layers that transform first are so)");
  if (resident_ && (tensor_ == nullptr || view_.rows != tensor_->rows()))
    throw UnsupportedError(what + " needs its input as a whole tensor, but it is a view (or the first rows) of one");
  if (tensor_ == nullptr)
    throw UnsupportedError(what + " needs its input whole, but the input is " +
                           (streamed() ? "streamed in row chunks (the features do not fit the memory given)"
                                       : std::string("absent")) +
                           "; precompute the first aggregation (--precompute-first-aggregation, with input dropout "
                           "0) or give the features more memory");
  return *tensor_;
}

InputMatrix InputMatrix::first_rows(std::int64_t n) const {
  HALO_EXPECTS(n >= 0 && n <= rows(),
               "InputMatrix::first_rows: " + std::to_string(n) + " rows of " + std::to_string(rows()));
  if (n == rows()) return *this;
  if (streamed())
    throw UnsupportedError("InputMatrix::first_rows: a streamed matrix is read whole (" + std::to_string(n) + " of " +
                           std::to_string(rows()) + " rows asked)");
  InputMatrix out = *this;
  if (resident_) out.view_ = view_.slice_rows(0, n);
  out.bf16_rows_ = bf16_ != nullptr ? n : 0;
  return out;
}

InputMatrix InputMatrix::read_with(ChunkReader reader) const {
  HALO_EXPECTS(resident_ && !transform_ && !reader_ && reader,
               "InputMatrix::read_with: needs a resident float32 matrix not yet transformed, and a reader");
  InputMatrix out = *this;
  out.reader_ = std::move(reader);
  return out;
}

InputMatrix InputMatrix::then(RowTransform more) const {
  HALO_EXPECTS(!empty(), "InputMatrix::then: there is no matrix");
  InputMatrix out = *this;
  if (!more) return out;
  if (!transform_) {
    out.transform_ = std::move(more);
    return out;
  }
  out.transform_ = [first = transform_, second = std::move(more)](TensorView rows, std::int64_t row) {
    first(rows, row);
    second(rows, row);
  };
  return out;
}

void InputMatrix::multiply(ConstTensorView w, TensorView out, float beta) const {
  HALO_EXPECTS(!empty(), "InputMatrix::multiply: there is no matrix");
  HALO_EXPECTS(w.rows == cols() && out.rows == rows() && out.cols == w.cols,
               "InputMatrix::multiply: x is " + shape(rows(), cols()) + ", w " + shape(w.rows, w.cols) + ", out " +
                   shape(out.rows, out.cols));
  if (read_whole()) {
    kernels::gemm(view_, Transpose::no, w, Transpose::no, out, 1.0f, beta);
    return;
  }
  for_each_chunk([&](ConstTensorView chunk, std::int64_t first_row) {
    kernels::gemm(chunk, Transpose::no, w, Transpose::no, out.slice_rows(first_row, first_row + chunk.rows), 1.0f,
                  beta);
  });
}

Tensor InputMatrix::multiply(ConstTensorView w) const {
  Tensor out = Tensor::empty(rows(), w.cols, w.device);
  multiply(w, out.view());
  return out;
}

void InputMatrix::multiply_each(const std::vector<Product>& products) const {
  HALO_EXPECTS(!empty(), "InputMatrix::multiply_each: there is no matrix");
  for (const Product& p : products)
    HALO_EXPECTS(p.w.rows == cols() && p.out.rows <= rows() && p.out.cols == p.w.cols,
                 "InputMatrix::multiply_each: x is " + shape(rows(), cols()) + ", w " + shape(p.w.rows, p.w.cols) +
                     ", out " + shape(p.out.rows, p.out.cols));
  if (read_whole()) {
    for (const Product& p : products)
      kernels::gemm(view_.slice_rows(0, p.out.rows), Transpose::no, p.w, Transpose::no, p.out);
    return;
  }
  for_each_chunk([&](ConstTensorView chunk, std::int64_t first_row) {
    for (const Product& p : products) {
      const std::int64_t end = std::min(p.out.rows, first_row + chunk.rows);
      if (end > first_row)
        kernels::gemm(chunk.slice_rows(0, end - first_row), Transpose::no, p.w, Transpose::no,
                      p.out.slice_rows(first_row, end));
    }
  });
}

void InputMatrix::add_transposed_products(const std::vector<TransposedProduct>& products) const {
  HALO_EXPECTS(!empty(), "InputMatrix::add_transposed_products: there is no matrix");
  for (const TransposedProduct& p : products)
    HALO_EXPECTS(p.grad.rows <= rows() && p.grad_weight.rows == cols() && p.grad_weight.cols == p.grad.cols,
                 "InputMatrix::add_transposed_products: x is " + shape(rows(), cols()) + ", grad " +
                     shape(p.grad.rows, p.grad.cols) + ", grad_weight " +
                     shape(p.grad_weight.rows, p.grad_weight.cols));
  if (read_whole()) {
    for (const TransposedProduct& p : products)
      kernels::gemm(view_.slice_rows(0, p.grad.rows), Transpose::yes, p.grad, Transpose::no, p.grad_weight, 1.0f, 1.0f);
    return;
  }
  for_each_chunk([&](ConstTensorView chunk, std::int64_t first_row) {
    for (const TransposedProduct& p : products) {
      const std::int64_t end = std::min(p.grad.rows, first_row + chunk.rows);
      if (end > first_row)
        kernels::gemm(chunk.slice_rows(0, end - first_row), Transpose::yes, p.grad.slice_rows(first_row, end),
                      Transpose::no, p.grad_weight, 1.0f, 1.0f);
    }
  });
}

std::int64_t GraphConv::aggregation_saved_bytes(std::int64_t in_dim, std::int64_t out_dim,
                                                std::int64_t vertices) const {
  if (recompute_aggregation()) return 0;
  if (keep_aggregation_bf16() && conv_aggregates_first(in_dim, out_dim))
    return kernels::Bf16Rows::bytes_for(vertices, in_dim);
  return conv_saved_bytes(in_dim, out_dim, vertices);
}

void GraphConv::finish_output(kernels::Tensor& y, const Parameter* bias, const Step& step) const {
  const kernels::ConstTensorView b = bias != nullptr ? bias->value.view() : kernels::ConstTensorView{};
  if (relu_epilogue_)
    bias_relu_dropout(y, b, epilogue_dropout_, step);
  else if (bias != nullptr)
    kernels::add_bias(y.view(), b);
}

}  // namespace halo::train
