// The GPU benchmarks of halo-bench: `gpu-spmm` (halo's SpMM kernel against cached cuSPARSE, with
// the minimum-bytes roofline and a device-to-device copy measured in the same run) and `gpu-gcn`
// (one full-graph GCN training epoch built from the kernels, all on the GPU).
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

struct GpuGcnBench {
  std::string dataset;
  int layers = 3;
  std::int64_t hidden = 256;
  float dropout = 0.5f;
  int epochs = 10;
  std::string json;
};

// Both write {"skipped": reason} and return 0 where no GPU is visible (or CUDA is not built).
int run_gpu_spmm_bench(const GpuSpmmBench& options);
int run_gpu_gcn_bench(const GpuGcnBench& options);

}  // namespace halo::tools
