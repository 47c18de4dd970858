// CPU dropout. The mask is recomputed from the key wherever it is needed, never stored.
//
// The mask, exactly (the CUDA twin must reproduce it bit for bit):
//   key64      = halo::stream_id(seed, epoch, layer)          (graph/base/random.hpp)
//   g          = global_ids[i], or i when global_ids is empty (as uint64)
//   b          = j / 8                                        (the block of 8 columns)
//   bits       = philox4x32({b_lo, b_hi, g_lo, g_hi}, key64)
//   u          = 16-bit half (j % 2) of word bits[(j % 8) / 2], low half first, over 65536
//   keep(i, j) = u >= p, i.e. u · 65536 >= ceil(p · 65536)
//   y[i, j]    = keep ? x[i, j] · (1 / (1 - p)) : 0,  with 1 / (1 - p) rounded to float once
// 16 bits per decision (p resolved to 2^-16) halve the Philox work against 32 bits per value;
// Philox dominates the cost of this kernel. A value depends only on (key, global id, column), so
// every thread count, row order, row subset and partitioning of the graph sees the same mask.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "graph/base/parallel.hpp"
#include "graph/base/random.hpp"
#include "kernels/cpu/cpu_kernels.hpp"

namespace halo::kernels::cpu {

void dropout(ConstTensorView x, TensorView y, float p, DropoutKey key, IndexView global_ids) {
  const std::int64_t cols = x.cols;
  if (p == 0.0f) {
    cpu::copy(x, y);
    return;
  }
  const std::uint64_t key64 = stream_id(key.seed, key.epoch, key.layer);
  const auto threshold = static_cast<std::uint32_t>(std::ceil(static_cast<double>(p) * 65536.0));
  const float scale = 1.0f / (1.0f - p);
  parallel_for(
      0, x.rows,
      [&](std::int64_t i) {
        const auto g = static_cast<std::uint64_t>(global_ids.data != nullptr ? global_ids.data[i] : i);
        const auto g_lo = static_cast<std::uint32_t>(g);
        const auto g_hi = static_cast<std::uint32_t>(g >> 32);
        const float* in = x.row(i);
        float* out = y.row(i);
        for (std::int64_t j0 = 0; j0 < cols; j0 += 8) {
          const auto b = static_cast<std::uint64_t>(j0 / 8);
          const std::array<std::uint32_t, 4> bits =
              philox4x32({static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32), g_lo, g_hi}, key64);
          const std::int64_t lanes = std::min<std::int64_t>(8, cols - j0);
          for (std::int64_t l = 0; l < lanes; ++l) {
            const std::uint32_t u = (bits[static_cast<std::size_t>(l / 2)] >> (16 * (l % 2))) & 0xFFFFu;
            out[j0 + l] = u >= threshold ? in[j0 + l] * scale : 0.0f;
          }
        }
      },
      std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(cols, 1)));
}

}  // namespace halo::kernels::cpu
