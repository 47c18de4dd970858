// The row mask checks the loss twins (kernels/cpu/loss.cpp, kernels/cuda/loss.cu and their
// multi-label kin) run on the host before touching their rows: every masked row in range, listed
// once when asked, labelled in [0, classes) (one class per row) or 0/1/-1 per task (multi-label).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels::detail {

// The operands of a loss dispatch: logits a valid view, labels present for a non-empty mask,
// the mask's entries present; grad (when given) of the logits' shape and device, apart from them.
inline void check_loss_operands(const char* op, ConstTensorView logits, const std::int64_t* labels, IndexView mask,
                                TensorView grad) {
  check_view(op, "logits", logits);
  HALO_EXPECTS(labels != nullptr || mask.size == 0, "labels are missing");
  HALO_EXPECTS(mask.size >= 0 && (mask.data != nullptr || mask.size == 0),
               "mask must hold its " + std::to_string(mask.size) + " entries");
  if (grad.data == nullptr) return;
  check_shape(op, "grad", grad, logits.rows, logits.cols);
  check_device(op, "grad", grad, logits.device);
  HALO_EXPECTS(!overlaps(logits, grad), "grad may not overlap logits");
}

// Every masked row in range and, when `require_distinct`, listed once; check_row(r) then checks
// the row's labels. Throws InvalidArgument naming `op` and the first bad entry. One pass over the
// mask with a byte per row (when `require_distinct`): small next to the loss.
template <class CheckRow>
void check_mask_rows(const char* op, std::int64_t rows, IndexView mask, bool require_distinct, CheckRow&& check_row) {
  std::vector<unsigned char> seen(require_distinct ? static_cast<std::size_t>(rows) : 0, 0);
  for (std::int64_t k = 0; k < mask.size; ++k) {
    const std::int64_t r = mask.data[k];
    if (r < 0 || r >= rows)
      throw InvalidArgument(std::string(op) + ": mask[" + std::to_string(k) + "] = " + std::to_string(r) +
                            " is outside [0, " + std::to_string(rows) + ")");
    check_row(r);
    if (require_distinct) {
      if (seen[static_cast<std::size_t>(r)] != 0)
        throw InvalidArgument(std::string(op) + ": row " + std::to_string(r) + " is listed twice in the mask");
      seen[static_cast<std::size_t>(r)] = 1;
    }
  }
}

// One label per row, in [0, classes).
inline void check_loss_mask(const char* op, std::int64_t rows, std::int64_t classes, const std::int64_t* labels,
                            IndexView mask, bool require_distinct) {
  check_mask_rows(op, rows, mask, require_distinct, [&](std::int64_t r) {
    if (labels[r] < 0 || labels[r] >= classes)
      throw InvalidArgument(std::string(op) + ": labels[" + std::to_string(r) + "] = " + std::to_string(labels[r]) +
                            " is outside [0, " + std::to_string(classes) + ")");
  });
}

// `tasks` labels per row (row-major), each 0, 1 or -1 (unlabelled). Returns the labelled entries
// of the masked rows.
inline std::int64_t check_multilabel_mask(const char* op, std::int64_t rows, std::int64_t tasks,
                                          const std::int64_t* labels, IndexView mask, bool require_distinct) {
  std::int64_t labelled = 0;
  check_mask_rows(op, rows, mask, require_distinct, [&](std::int64_t r) {
    for (std::int64_t j = 0; j < tasks; ++j) {
      const std::int64_t y = labels[r * tasks + j];
      if (y < -1 || y > 1)
        throw InvalidArgument(std::string(op) + ": labels[" + std::to_string(r) + ", " + std::to_string(j) + "] = " +
                              std::to_string(y) + " is not 0, 1 or -1 (unlabelled)");
      labelled += y >= 0;
    }
  });
  return labelled;
}

}  // namespace halo::kernels::detail
