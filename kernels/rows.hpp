// Row movement: gather rows by index, scatter-add rows by index (halo packing and unpacking,
// embedding lookups and their gradients).
#pragma once

#include "kernels/device_index.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels {

// out[i] = src[index[i]] for i < index.size; out has index.size rows. Parallel over rows.
void gather_rows(ConstTensorView src, IndexView index, TensorView out);

// out[index[i]] += src[i] for i < index.size (repeated targets add up). Deterministic: each
// target row receives its additions in increasing i, whatever the thread count (CPU: each task
// owns a block of columns and a range of target rows and walks the index list in order, so there
// are no atomics). Indices outside [0, rows) throw InvalidArgument. out may not overlap src.
void scatter_add_rows(ConstTensorView src, IndexView index, TensorView out);

// The same with an index built once (its limit at most src.rows / out.rows, on the tensors'
// device; for scatter built with IndexUse::scatter): on a GPU nothing is checked, copied or sorted
// on the host per call. An empty index may be on any device.
void gather_rows(ConstTensorView src, const DeviceIndex& index, TensorView out);
void scatter_add_rows(ConstTensorView src, const DeviceIndex& index, TensorView out);

}  // namespace halo::kernels
