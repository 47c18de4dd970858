// DeviceIndex: the checks, the host copy, and on a GPU the grouping by target and the one upload.
#include "kernels/device_index.hpp"

#include <string>
#include <utility>

#include "graph/base/error.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#ifdef HALO_WITH_CUDA
#include "kernels/cuda/memory.hpp"
#endif

namespace halo::kernels {
namespace {

#ifdef HALO_WITH_CUDA
// [entries (n) | targets (t) | offsets (t + 1) | sources (n)]: a stable counting sort of the
// positions by target, so target row t owns the list of its source rows in increasing order.
std::vector<std::int64_t> grouped_by_target(const std::vector<std::int64_t>& index, std::int64_t limit,
                                            std::int64_t& targets) {
  const auto n = static_cast<std::int64_t>(index.size());
  std::vector<std::int64_t> start(static_cast<std::size_t>(limit) + 1, 0);
  for (const std::int64_t t : index) ++start[static_cast<std::size_t>(t) + 1];
  targets = 0;
  for (std::size_t t = 0; t < static_cast<std::size_t>(limit); ++t) {
    targets += start[t + 1] > 0 ? 1 : 0;
    start[t + 1] += start[t];
  }
  std::vector<std::int64_t> packed(index);
  packed.resize(static_cast<std::size_t>(n + targets + (targets + 1) + n));
  std::int64_t* target = packed.data() + n;
  std::int64_t* offsets = target + targets;
  std::int64_t* sources = offsets + targets + 1;
  std::int64_t g = 0;
  for (std::size_t t = 0; t < static_cast<std::size_t>(limit); ++t) {
    if (start[t + 1] == start[t]) continue;
    target[g] = static_cast<std::int64_t>(t);
    offsets[g] = start[t];
    ++g;
  }
  offsets[targets] = n;
  std::vector<std::int64_t>& next = start;  // reused as the fill cursor of each target
  for (std::int64_t i = 0; i < n; ++i) sources[next[static_cast<std::size_t>(index[static_cast<std::size_t>(i)])]++] = i;
  return packed;
}
#endif

}  // namespace

DeviceIndex::DeviceIndex(IndexView index, std::int64_t limit, Device device, IndexUse use, const char* op)
    : limit_(limit), device_(device), use_(use) {
  HALO_EXPECTS(index.size >= 0 && (index.data != nullptr || index.size == 0),
               std::string(op) + ": index must hold its " + std::to_string(index.size) + " entries");
  if (device.is_cuda()) {
    require_device(device);
    cuda::require_host_memory(op, "index", index.data, device.index);
  }
  for (std::int64_t i = 0; i < index.size; ++i)
    if (index.data[i] < 0 || index.data[i] >= limit)
      throw InvalidArgument(std::string(op) + ": index[" + std::to_string(i) + "] = " + std::to_string(index.data[i]) +
                            " is outside [0, " + std::to_string(limit) + ")");
  host_.assign(index.data, index.data + index.size);
  if (!device.is_cuda() || index.size == 0) return;
#ifdef HALO_WITH_CUDA
  const std::vector<std::int64_t> packed = use == IndexUse::scatter ? grouped_by_target(host_, limit, targets_) : host_;
  const std::size_t bytes = packed.size() * sizeof(std::int64_t);
  device_data_ = static_cast<std::int64_t*>(cuda::allocate(device.index, bytes));
  allocated_bytes_ = static_cast<std::int64_t>(bytes);
  try {
    cuda::upload_bytes(device.index, device_data_, packed.data(), bytes);
  } catch (...) {
    release();
    throw;
  }
#endif
}

DeviceIndex::~DeviceIndex() { release(); }

DeviceIndex::DeviceIndex(DeviceIndex&& other) noexcept
    : host_(std::move(other.host_)),
      limit_(other.limit_),
      device_(other.device_),
      use_(other.use_),
      targets_(std::exchange(other.targets_, 0)),
      device_data_(std::exchange(other.device_data_, nullptr)),
      allocated_bytes_(std::exchange(other.allocated_bytes_, 0)) {}

DeviceIndex& DeviceIndex::operator=(DeviceIndex&& other) noexcept {
  if (this != &other) {
    release();
    host_ = std::move(other.host_);
    limit_ = other.limit_;
    device_ = other.device_;
    use_ = other.use_;
    targets_ = std::exchange(other.targets_, 0);
    device_data_ = std::exchange(other.device_data_, nullptr);
    allocated_bytes_ = std::exchange(other.allocated_bytes_, 0);
  }
  return *this;
}

void DeviceIndex::release() noexcept {
#ifdef HALO_WITH_CUDA
  if (device_data_ != nullptr) cuda::release(device_.index, device_data_);
#endif
  device_data_ = nullptr;
  allocated_bytes_ = 0;
  targets_ = 0;
}

std::int64_t DeviceIndex::device_bytes() const {
  return device_.is_cuda() ? allocated_bytes_ : size() * static_cast<std::int64_t>(sizeof(std::int64_t));
}

std::int64_t DeviceIndex::bytes_for(std::int64_t size, Device device, IndexUse use) {
  const auto id = static_cast<std::int64_t>(sizeof(std::int64_t));
  if (!device.is_cuda()) return size * id;
  if (size == 0) return 0;
  // The grouping of scatter_add_rows: entries, targets (here one per entry), offsets, sources.
  return (use == IndexUse::scatter ? 4 * size + 1 : size) * id;
}

}  // namespace halo::kernels
