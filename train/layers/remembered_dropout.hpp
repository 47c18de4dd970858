// A dropout applied to a layer's input chunk by chunk as the layer reads it (InputMatrix::then),
// that draws each row's mask once per step. A layer reading its input only through products reads
// it in several passes (every product of forward, the weights' gradients in backward, RGAT's once
// per relation); drawing the mask again in each (Philox, one block per 8 values) cost more than
// the products on a CPU. The first pass over a row draws it (kernels::dropout_forward) and keeps
// one bit per value; later passes select by those bits. Each pass copies the rows into the
// layer's chunk as it drops them, so no separate copy is made either.
#pragma once

#include <cstdint>

#include "kernels/dropout.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/layer_input.hpp"

namespace halo::train {

// A ChunkReader for a rows x cols matrix giving, on every pass, kernels::dropout_forward's values
// with `key` and row r keyed on global_ids[r] (on r itself when global_ids.data is null): x · (1 /
// (1 - p)) where the mask keeps the value, else +0 (a kept zero, whose sign the mask cannot show,
// comes out +0 as well). The first pass over each row draws its mask as it copies the row (one
// pass, kernels::dropout_forward from the source into the chunk) and keeps a bit per value; later
// passes copy and select by those bits in one pass. The bits are freed with the reader (the last
// InputMatrix holding it). Rows in device memory draw the mask every pass (on a GPU, Philox costs
// little against the products), keeping nothing. p must be in (0, 1). global_ids: at least `rows`
// of them (or none), alive while the reader is used. Not for concurrent calls.
ChunkReader remembered_dropout(float p, kernels::DropoutKey key, kernels::IndexView global_ids, std::int64_t rows,
                               std::int64_t cols);

// x with a dropout (p in (0, 1), `key`, row r keyed on global_ids[r]) applied as a layer reads it
// chunk by chunk: a resident float32 x through remembered_dropout (its mask drawn on a row's first
// read and kept as bits for the later ones), a streamed or bfloat16 one with the mask drawn on
// every read (dropout_rows).
InputMatrix dropped_as_read(const InputMatrix& x, float p, kernels::DropoutKey key, kernels::IndexView global_ids);

// The bytes its bits take for a rows x cols matrix on `device` from its first read on (a host
// tensor's storage): per row a byte saying whether it is drawn and one bit per value, padded to a
// multiple of 4 bytes; none on a GPU, where the mask is drawn on every read.
std::int64_t remembered_dropout_bytes(std::int64_t rows, std::int64_t cols, const kernels::Device& device);

}  // namespace halo::train
