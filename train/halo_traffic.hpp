// The bytes a training step's halo exchanges move, from the model and the halo's size alone: what
// `halo-train --plan-only` reports per rank before anything runs, and what the MPI tests hold the
// measured traffic to.
#pragma once

#include <cstdint>

#include "train/models/model.hpp"

namespace halo::train {

// Bytes a GCN / GraphSAGE / GAT training step receives for `halo_rows` halo rows (a rank's halo,
// or the sum over ranks) when every halo row travels (no boundary sampling), float32 rows:
// GCN / GraphSAGE: per layer a forward exchange of min(in, out) columns (the narrower side, which
// the layer aggregates), and the gradients' exchange back unless the layer aggregates first and
// nobody needs its input gradient (the first layer); GAT: per layer [h | source scores] forward
// and their gradients back, heads · (width + 1) columns. Sent equals received over all ranks.
std::int64_t halo_bytes_per_epoch(std::int64_t halo_rows, std::int64_t in_dim, const ModelConfig& model,
                                  std::int64_t classes);

}  // namespace halo::train
