// halo_bytes_per_epoch: the exchanges of each layer, as the layers make them.
#include "train/halo_traffic.hpp"

#include <algorithm>

namespace halo::train {

std::int64_t halo_bytes_per_epoch(std::int64_t halo_rows, std::int64_t in_dim, const ModelConfig& m,
                                  std::int64_t classes) {
  std::int64_t bytes = 0;
  for (int l = 0; l < m.layers; ++l) {
    const bool last = l + 1 == m.layers;
    if (m.kind == "gat") {
      const std::int64_t heads = last ? m.out_heads : m.heads, width = last ? classes : m.hidden;
      bytes += 2 * halo_rows * heads * (width + 1) * 4;
      continue;
    }
    const std::int64_t in = l == 0 ? in_dim : m.hidden;
    const std::int64_t out = last ? classes : m.hidden;
    const int exchanges = (l == 0 && out >= in) ? 1 : 2;
    bytes += exchanges * halo_rows * std::min(in, out) * 4;
  }
  return bytes;
}

}  // namespace halo::train
