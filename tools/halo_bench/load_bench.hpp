// The load benchmark of halo-bench: what the checks on open cost against reading the files.
#pragma once

#include <string>

namespace halo::tools {

struct LoadBench {
  std::string dataset;
  std::string mode = "verify";  // read | crc | open | verify
  std::string json;
};

int run_load_bench(const LoadBench& options);

}  // namespace halo::tools
