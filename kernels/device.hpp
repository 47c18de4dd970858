// Devices: where a tensor lives and a kernel runs (the host CPU, or one CUDA GPU), how to name
// them on the command line ("cpu", "cuda", "cuda:1"), and what this build and machine offer.
#pragma once

#include <string>

namespace halo::kernels {

enum class DeviceType { cpu, cuda };

struct Device {
  DeviceType type = DeviceType::cpu;
  int index = 0;  // GPU ordinal; 0 for the CPU

  static Device cpu() { return Device{}; }
  static Device cuda(int index = 0) { return Device{DeviceType::cuda, index}; }
  bool is_cuda() const { return type == DeviceType::cuda; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string to_string() const;  // "cpu" or "cuda:N"
};

// Parses "cpu", "cuda" or "cuda:N"; throws InvalidArgument naming the text otherwise.
Device parse_device(const std::string& text);

// True when this build contains the CUDA backend.
bool built_with_cuda();

// Number of usable GPUs: 0 without the CUDA backend, and 0 when the CUDA runtime reports any
// error (no driver, no device). Asked of the driver once per process. Never throws.
int cuda_device_count();

// Throws UnsupportedError, saying why, unless `device` can be used here: the CPU always can; a
// GPU needs a CUDA build and a visible device with that ordinal.
void require_device(const Device& device);

}  // namespace halo::kernels
