// The inflate benchmark of halo-bench: the decompression floor of a dataset read.
#pragma once

#include <string>
#include <vector>

namespace halo::tools {

struct InflateBench {
  std::vector<std::string> files;
  std::string json;
};

int run_inflate_bench(const InflateBench& options);

}  // namespace halo::tools
