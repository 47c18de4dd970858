// A dropout applied to a layer's input chunk by chunk as the layer reads it (InputMatrix::then),
// that draws each row's mask once per step. A layer reading its input only through products reads
// it in several passes (every product of forward, the weights' gradients in backward, RGAT's once
// per relation); drawing the mask again in each (Philox, one block per 8 values) cost more than
// the products on a CPU. The first pass over a row draws it (kernels::dropout_forward) and keeps
// one bit per value; later passes select by those bits.
#pragma once

#include <cstdint>

#include "kernels/dropout.hpp"
#include "kernels/tensor.hpp"
#include "train/features/feature_pipeline.hpp"

namespace halo::train {

// A RowTransform for a rows x cols matrix giving, on every pass, dropout_rows(p, key, global_ids)'s
// values: x · (1 / (1 - p)) where the mask keeps the value, else +0 (a kept zero, whose sign the
// mask cannot show, comes out +0 as well). The first pass over each row draws its mask and keeps
// a bit per value; the bits are freed with the transform (the last InputMatrix holding it). Rows
// in device memory draw the mask every pass (on a GPU, Philox costs little against the products),
// keeping nothing. p = 0 gives an empty transform. global_ids: as dropout_rows (alive while the
// transform is used). Not for concurrent calls.
RowTransform remembered_dropout_rows(float p, kernels::DropoutKey key, kernels::IndexView global_ids, std::int64_t rows,
                                     std::int64_t cols);

// The bytes its bits take for a rows x cols matrix once every row was read: one bit per value,
// each row a whole number of bytes, and a byte per row saying whether it is drawn.
std::int64_t remembered_dropout_bytes(std::int64_t rows, std::int64_t cols);

}  // namespace halo::train
