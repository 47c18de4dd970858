// Fused optimiser updates applied to one parameter tensor on its own device, and the row-sparse
// Adam of embedding tables with its per-row state (SparseRows).
#pragma once

#include <cstdint>

#include "graph/base/array.hpp"
#include "kernels/device.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels {

struct AdamHyper {
  float lr = 0.01f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  bool decoupled = false;  // AdamW: decay the weights directly instead of adding wd · w to the gradient
};

// One Adam/AdamW step (PyTorch's formulation); `step` counts from 1. m and v have param's shape.
void adam_step(TensorView param, ConstTensorView grad, TensorView m, TensorView v, const AdamHyper& h,
               std::int64_t step);

// Adam on selected rows only, each with its own step count (sparse updates of embedding tables):
// row rows[k] takes one step numbered steps[k] (from 1), exactly as adam_step updates a row.
// Rows must be distinct and in range (InvalidArgument otherwise).
void adam_step_rows(TensorView param, ConstTensorView grad, TensorView m, TensorView v, IndexView rows,
                    const std::int64_t* steps, const AdamHyper& h);

// The row state of a row-sparse optimiser (an embedding table's sparse Adam): per row whether a
// gradient reached it since its last step (touched) and how many steps it has taken, kept on the
// table's device, so that an epoch on a GPU marks, steps and clears rows without the host reading
// anything back. Move-only.
class SparseRows {
 public:
  SparseRows() = default;
  // `rows` rows, none touched, no steps taken, on `device` (UnsupportedError for a GPU this
  // process cannot use).
  SparseRows(std::int64_t rows, Device device);
  ~SparseRows();
  SparseRows(SparseRows&& other) noexcept;
  SparseRows& operator=(SparseRows&& other) noexcept;
  SparseRows(const SparseRows&) = delete;
  SparseRows& operator=(const SparseRows&) = delete;

  std::int64_t rows() const { return rows_; }
  const Device& device() const { return device_; }
  // rows() flags (1: touched) and step counts on device(), for the kernels below. steps() first
  // uploads the host copy host_steps() handed out, if any, so that what was written into it counts.
  std::uint8_t* touched() { return touched_; }
  std::int64_t* steps();

  // Host views for tests and reports (on a GPU, copies that wait for the device).
  bool is_touched(std::int64_t row) const;
  std::int64_t count_touched() const;
  // The step counts as a host array, for checkpoints, which read and write it: on the CPU the
  // counts themselves; on a GPU a copy downloaded now (waiting for the device) that the next
  // steps() uploads back.
  Array<std::int64_t>& host_steps();

 private:
  void release() noexcept;

  std::int64_t rows_ = 0;
  Device device_;
  void* device_memory_ = nullptr;      // on a GPU: the counts, then the flags
  std::uint8_t* touched_ = nullptr;    // host_touched_ on the CPU, in device_memory_ on a GPU
  std::int64_t* steps_ = nullptr;      // host_steps_ on the CPU, in device_memory_ on a GPU
  Array<std::int64_t> host_steps_;     // on a GPU: the copy host_steps() hands out
  Array<std::uint8_t> host_touched_;   // CPU only
  bool host_copy_out_ = false;         // on a GPU: host_steps_ goes back before steps_ is used
};

// grad += grad_all (both param-shaped, on rows' device) and touches every row where grad_all holds
// a nonzero value (negative zero is zero). Rows x cols work, parallel over rows, deterministic.
void accumulate_row_grad(ConstTensorView grad_all, TensorView grad, SparseRows& rows);
// The same for a chunk of the rows: grad[first_row + i] += grad_rows[i] for the rows of grad_rows,
// touching those where grad_rows holds a nonzero value (InvalidArgument when the chunk reaches past
// the last row). grad_rows.rows x cols work.
void accumulate_row_grad(ConstTensorView grad_rows, TensorView grad, SparseRows& rows, std::int64_t first_row);

// One Adam / AdamW step of every touched row, each its own parameter with its own step count: the
// row's count rises by one and the row takes exactly adam_step's update with that count (the
// bias-correction factors formed from it in double, as adam_step forms them; on a GPU the device's
// pow may round its last bit apart from the host's). Then the touched rows' gradients are zeroed
// and no row is touched. Untouched rows, their moments and counts are left as they were.
// O(rows + touched · cols), parallel over rows, deterministic.
void adam_step_touched(TensorView param, TensorView grad, TensorView m, TensorView v, SparseRows& rows,
                       const AdamHyper& h);

// Zeroes the gradients of the touched rows and touches none (dropping pending gradients without
// a step). O(rows + touched · cols).
void clear_touched(TensorView grad, SparseRows& rows);

struct SgdHyper {
  float lr = 0.01f;
  float momentum = 0.0f;
  float weight_decay = 0.0f;
  bool nesterov = false;
};

// One SGD step with momentum (PyTorch's formulation); `step` counts from 1 (the first step
// initialises the momentum buffer to the gradient).
void sgd_step(TensorView param, ConstTensorView grad, TensorView momentum, const SgdHyper& h, std::int64_t step);

}  // namespace halo::kernels
