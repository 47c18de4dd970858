// Creation and seeded initialisation of parameters: zero tensors with zero gradients, and
// Glorot-uniform weights that depend only on (seed, parameter index), so every rank, thread count
// and device draws the same model.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/parameter.hpp"

namespace halo::train {

// A rows x cols parameter on `device` whose value and grad are zero.
Parameter make_parameter(std::string name, std::int64_t rows, std::int64_t cols, kernels::Device device,
                         float weight_decay = 0.0f);

// Fills w (fan_in x fan_out = rows x cols, any device) with U(-a, a), a = sqrt(6 / (rows + cols))
// (Glorot & Bengio 2010; torch.nn.init.xavier_uniform_ of the transposed PyTorch weight). Values
// come in row-major order from the Philox stream keyed on (seed, index); drawn on the host, O(rows
// · cols), deterministic.
void glorot_uniform(kernels::Tensor& w, std::uint64_t seed, std::uint64_t index);

// The rows `rows` (ids in [0, total_rows)) of what glorot_uniform draws for a total_rows x
// w.cols() tensor: w's row i gets that tensor's row rows[i], so the parts of a table held by
// different ranks are the rows of the one table a single process draws. O(w.numel()).
void glorot_uniform_rows(kernels::Tensor& w, std::int64_t total_rows, kernels::IndexView rows, std::uint64_t seed,
                         std::uint64_t index);

}  // namespace halo::train
