// The row-sparse Adam's CUDA entry points in a build without CUDA: a SparseRows on a GPU cannot
// be made in such a build (its constructor refuses the device first), so these only keep the
// program linkable, and throw UnsupportedError all the same.
#include <string>

#include "graph/base/error.hpp"
#include "kernels/cuda/cuda_kernels.hpp"

namespace halo::kernels::cuda {
namespace {
[[noreturn]] void missing(const char* op) {
  throw UnsupportedError(std::string(op) + ": this halo was built without CUDA (configure with -DHALO_WITH_CUDA=ON)");
}
}  // namespace

void accumulate_row_grad(ConstTensorView, TensorView, std::uint8_t*) { missing("accumulate_row_grad"); }
void adam_step_touched(TensorView, TensorView, TensorView, TensorView, std::uint8_t*, std::int64_t*,
                       const AdamHyper&) {
  missing("adam_step_touched");
}
void clear_touched(TensorView, std::uint8_t*) { missing("clear_touched"); }

}  // namespace halo::kernels::cuda
