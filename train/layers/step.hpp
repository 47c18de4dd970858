// What a layer needs to know about the current pass: training or evaluation, and the key of its
// random decisions (dropout), which must not depend on threads, devices or partitioning.
#pragma once

#include <cstdint>

#include "kernels/device_index.hpp"
#include "kernels/tensor.hpp"

namespace halo::train {

struct Step {
  bool training = true;
  std::uint64_t seed = 0;        // the run's seed
  std::uint64_t epoch = 0;
  kernels::IndexView global_ids; // global vertex id of each local row; empty = identity
  // The same ids built once on the model's device (or null): dropout on that device keys on them
  // without uploading global_ids at every call.
  const kernels::DeviceIndex* device_global_ids = nullptr;
};

}  // namespace halo::train
