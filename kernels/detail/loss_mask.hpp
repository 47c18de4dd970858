// The row mask check both loss twins (kernels/cpu/loss.cpp, kernels/cuda/loss.cu) run on the host
// before touching their rows: every masked row in range, listed once when asked, labelled in
// [0, classes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels::detail {

// Throws InvalidArgument naming `op` and the first bad entry. One pass over the mask with a byte
// per row (when `require_distinct`): small next to the softmax.
inline void check_loss_mask(const char* op, std::int64_t rows, std::int64_t classes, const std::int64_t* labels,
                            IndexView mask, bool require_distinct) {
  std::vector<unsigned char> seen(require_distinct ? static_cast<std::size_t>(rows) : 0, 0);
  for (std::int64_t k = 0; k < mask.size; ++k) {
    const std::int64_t r = mask.data[k];
    if (r < 0 || r >= rows)
      throw InvalidArgument(std::string(op) + ": mask[" + std::to_string(k) + "] = " + std::to_string(r) +
                            " is outside [0, " + std::to_string(rows) + ")");
    if (labels[r] < 0 || labels[r] >= classes)
      throw InvalidArgument(std::string(op) + ": labels[" + std::to_string(r) + "] = " + std::to_string(labels[r]) +
                            " is outside [0, " + std::to_string(classes) + ")");
    if (require_distinct) {
      if (seen[static_cast<std::size_t>(r)] != 0)
        throw InvalidArgument(std::string(op) + ": row " + std::to_string(r) + " is listed twice in the mask");
      seen[static_cast<std::size_t>(r)] = 1;
    }
  }
}

}  // namespace halo::kernels::detail
