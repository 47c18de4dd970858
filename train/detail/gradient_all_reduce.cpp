// all_reduce_gradients: the weight gradients of every rank summed in one message, in a device
// buffer when the communicator moves GPU buffers, else through the host.
#include "train/detail/gradient_all_reduce.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/tensor.hpp"

namespace halo::train::detail {
namespace {

// A parameter's gradient as one row of numel() values (tensors are contiguous).
kernels::TensorView flat_view(Parameter& p) {
  return {p.grad.data(), 1, p.grad.numel(), p.grad.numel(), p.grad.device()};
}

// True when every gradient is on a GPU whose buffers the communicator moves itself (NCCL).
bool reduce_on_device(const dist::Communicator& comm, const std::vector<Parameter*>& parameters) {
  const kernels::Device device = comm.device();
  if (!device.is_cuda()) return false;
  for (const Parameter* p : parameters)
    if (!(p->grad.device() == device)) return false;
  return true;
}

}  // namespace

void all_reduce_gradients(dist::Communicator& comm, const std::vector<Parameter*>& parameters) {
  std::int64_t total = 0;
  for (const Parameter* p : parameters) total += p->grad.numel();
  if (total == 0) return;
  if (reduce_on_device(comm, parameters)) {
    const kernels::Device device = comm.device();
    kernels::Tensor flat = kernels::Tensor::empty(1, total, device);
    std::int64_t at = 0;
    for (Parameter* p : parameters) {
      const std::int64_t n = p->grad.numel();
      if (n == 0) continue;
      kernels::copy(flat_view(*p), {flat.data() + at, 1, n, n, device});
      at += n;
    }
    comm.all_reduce(flat.data(), total, dist::DataType::float32);
    at = 0;
    for (Parameter* p : parameters) {
      const std::int64_t n = p->grad.numel();
      if (n == 0) continue;
      kernels::copy(kernels::ConstTensorView{flat.data() + at, 1, n, n, device}, flat_view(*p));
      at += n;
    }
    return;
  }
  std::vector<float> flat(static_cast<std::size_t>(total));
  std::int64_t offset = 0;
  for (const Parameter* p : parameters) {
    const std::vector<float> g = p->grad.to_vector();
    std::copy(g.begin(), g.end(), flat.begin() + offset);
    offset += p->grad.numel();
  }
  dist::all_reduce(comm, flat);
  offset = 0;
  for (Parameter* p : parameters) {
    const std::vector<float> g(flat.begin() + offset, flat.begin() + offset + p->grad.numel());
    p->grad.copy_from(kernels::Tensor::from_vector(p->grad.rows(), p->grad.cols(), g).view());
    offset += p->grad.numel();
  }
}

}  // namespace halo::train::detail
