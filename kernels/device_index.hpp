// DeviceIndex: an index array checked once and kept on the device that uses it, for operators
// that gather, scatter or key on the same rows every epoch (the halo exchange, dropout).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/tensor.hpp"

namespace halo::kernels {

// What a DeviceIndex is read for: `rows` (gather_rows, dropout's ids) or `scatter` (also
// scatter_add_rows, which on a GPU needs the entries grouped by target).
enum class IndexUse { rows, scatter };

// The index owns copies made when it is built (a host copy, and on a GPU a device copy and, for
// scatter, the grouping), never a reference to the caller's array: changing or freeing that array
// afterwards cannot make an operator read stale entries, and no call uploads or sorts again.
// Move-only. (No default constructor, so that `{}` passed for an index still means an empty
// IndexView; an empty DeviceIndex is built from one.)
class DeviceIndex {
 public:
  // Checks every entry of `index` (host memory) is in [0, limit), InvalidArgument naming `op` and
  // the first that is not; copies it, and on a GPU queues the upload through pinned staging
  // (nothing waits). For scatter on a GPU, also groups the entries by target with a stable
  // counting sort: O(size + limit) host time once, 2 · size + 2 · targets + 1 int64 on the device.
  DeviceIndex(IndexView index, std::int64_t limit, Device device, IndexUse use, const char* op = "DeviceIndex");
  ~DeviceIndex();
  DeviceIndex(DeviceIndex&& other) noexcept;
  DeviceIndex& operator=(DeviceIndex&& other) noexcept;
  DeviceIndex(const DeviceIndex&) = delete;
  DeviceIndex& operator=(const DeviceIndex&) = delete;

  std::int64_t size() const { return static_cast<std::int64_t>(host_.size()); }
  std::int64_t limit() const { return limit_; }
  Device device() const { return device_; }
  IndexUse use() const { return use_; }
  IndexView host() const { return {host_.data(), size()}; }
  // Bytes the index holds on its device: the host copy on the CPU; on a GPU what it allocated
  // there (its host copy is host memory). bytes_for: the same before one exists, for `size`
  // distinct entries (TrainingRows' selections), which is what a memory plan counts.
  std::int64_t device_bytes() const;
  static std::int64_t bytes_for(std::int64_t size, Device device, IndexUse use);
  // GPU only, in device memory: the entries (size()); for scatter, the `targets()` distinct
  // targets in increasing order, their offsets (targets() + 1) into the sources, and the sources
  // (size()): target g receives the rows sources[offsets[g], offsets[g + 1]) in increasing order.
  const std::int64_t* device_entries() const { return device_data_; }
  std::int64_t targets() const { return targets_; }
  const std::int64_t* device_targets() const { return device_data_ == nullptr ? nullptr : device_data_ + size(); }
  const std::int64_t* device_offsets() const { return device_targets() + targets_; }
  const std::int64_t* device_sources() const { return device_offsets() + targets_ + 1; }

 private:
  void release() noexcept;

  std::vector<std::int64_t> host_;
  std::int64_t limit_ = 0;
  Device device_ = Device::cpu();
  IndexUse use_ = IndexUse::rows;
  std::int64_t targets_ = 0;
  std::int64_t* device_data_ = nullptr;
  std::int64_t allocated_bytes_ = 0;  // of device_data_
};

}  // namespace halo::kernels
