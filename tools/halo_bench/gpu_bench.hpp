// The GPU benchmark of halo-bench `gpu-spmm`: halo's SpMM kernel against cached cuSPARSE, with the
// minimum-bytes roofline and a device-to-device copy measured in the same run. (Training on a GPU
// is timed with halo-train itself: bench/gpu_gcn.py.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace halo::tools {

struct GpuSpmmBench {
  std::string dataset;
  std::vector<std::int64_t> widths = {16, 64, 128, 256};
  int repeat = 10;
  std::string json;
};

// Writes {"skipped": reason} and returns 0 where no GPU is visible (or CUDA is not built).
int run_gpu_spmm_bench(const GpuSpmmBench& options);

}  // namespace halo::tools
