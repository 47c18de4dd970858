// The CUDA kernels' block size, in a header of its own so that device code also compiled as host
// code (tests/support/cuda_emulator.hpp runs the attention kernels on the CPU) reads it without
// the CUDA runtime.
#pragma once

namespace halo::kernels::cuda {

constexpr int threads_per_block = 256;

}  // namespace halo::kernels::cuda
