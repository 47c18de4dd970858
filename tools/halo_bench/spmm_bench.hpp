// The spmm benchmark of halo-bench.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace halo::tools {

struct SpmmBench {
  std::string dataset;
  std::vector<std::int64_t> widths = {16, 64, 128, 256};
  int repeat = 10;
  std::string json;
};

int run_spmm_bench(const SpmmBench& options);

}  // namespace halo::tools
