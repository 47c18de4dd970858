// Elementwise and reduction primitives of the layers: bias, ReLU, ELU, GELU, scaling, column sums,
// feature row normalisation. Every function works on views of one device; all are deterministic.
#pragma once

#include "kernels/tensor.hpp"

namespace halo::kernels {

// x[i, :] += bias[0, :] (bias is 1 x cols).
void add_bias(TensorView x, ConstTensorView bias);

// out[0, :] = Σ_i x[i, :] (column sums, e.g. the bias gradient), or += with Accumulate-style flag.
void column_sums(ConstTensorView x, TensorView out, bool accumulate = false);

// y = max(x, 0). y may alias x.
void relu_forward(ConstTensorView x, TensorView y);
// grad_x = scale · grad_y where y > 0, else 0 (y is the forward output). grad_x may alias
// grad_y. A scale other than 1 with y the output of a dropout after the ReLU is both backward
// passes in one: dropout's y is positive exactly where the ReLU's output was and the mask kept
// it, so grad_y · dropout_scale(p) there and 0 elsewhere is dropout's then ReLU's backward.
void relu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x, float scale = 1.0f);

// ELU (alpha 1): y = x where x > 0, else exp(x) - 1. y may alias x.
void elu_forward(ConstTensorView x, TensorView y);
// grad_x = grad_y where y > 0, else grad_y · (y + 1) (y is the forward output, exp(x) - 1 there,
// whose derivative exp(x) is y + 1). grad_x may alias grad_y.
void elu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x);

// GELU, exact (PyTorch's default, HGT's activation): y = x · Φ(x) = x · (1 + erf(x / √2)) / 2.
// y may alias x.
void gelu_forward(ConstTensorView x, TensorView y);
// grad_x = grad_y · (Φ(x) + x · φ(x)), φ the standard normal density; from the forward's input x
// (GELU is not invertible from its output). grad_x may alias grad_y, not x.
void gelu_backward(ConstTensorView x, ConstTensorView grad_y, TensorView grad_x);

// y = alpha · x + beta · y (beta = 0 ignores y's old values).
void axpby(float alpha, ConstTensorView x, float beta, TensorView y);

// Divides each row by its sum (rows summing to 0 are left as they are): the feature
// preprocessing of Kipf & Welling (tkipf/gcn preprocess_features).
void normalize_rows(TensorView x);

// Σ x² over all entries, in double.
double sum_of_squares(ConstTensorView x);
// Σ x ⊙ y over all entries of two tensors of one shape, in double (summed in a fixed order: the
// same on any thread count, and on a GPU on every run).
double sum_of_products(ConstTensorView x, ConstTensorView y);

}  // namespace halo::kernels
