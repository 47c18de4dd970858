// remembered_dropout_rows: the mask drawn once per row (Philox), later passes selecting by its bits.
#include "train/layers/remembered_dropout.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::train {
namespace {

// A row's bits: one byte per 8 values, bit k of byte b for value 8 · b + k.
std::int64_t bytes_per_row(std::int64_t cols) { return (cols + 7) / 8; }

// What a transform keeps: per row its bits and whether they are drawn.
struct MaskBits {
  std::int64_t rows = 0, cols = 0, row_bytes = 0;
  std::vector<std::uint8_t> bits;  // rows x row_bytes, allocated at the first pass
  std::vector<char> drawn;
};

// Per byte of bits, the 8 float masks it stands for (all ones where the bit is set): selecting 8
// values is then 8 independent ANDs, which the compiler vectorises.
struct ByteMasks {
  std::uint32_t m[256][8];
  ByteMasks() {
    for (int b = 0; b < 256; ++b)
      for (int k = 0; k < 8; ++k) m[b][k] = ((b >> k) & 1) != 0 ? 0xFFFFFFFFu : 0u;
  }
};
const ByteMasks byte_masks;

// Rows [begin, end) of the chunk hold the dropout's values: keep a bit where one is not 0.
void record(MaskBits& m, kernels::ConstTensorView rows, std::int64_t first_row, std::int64_t begin, std::int64_t end) {
  parallel_for_ranges(
      begin, end,
      [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t r = b; r < e; ++r) {
          const float* v = rows.row(r);
          std::uint8_t* out = m.bits.data() + (first_row + r) * m.row_bytes;
          // A value is kept exactly when a bit other than the sign's is set: integer tests on 8 lanes.
          for (std::int64_t byte = 0; byte < m.row_bytes; ++byte) {
            const std::int64_t j0 = 8 * byte, n = std::min<std::int64_t>(8, m.cols - j0);
            std::uint32_t word[8] = {};
            std::memcpy(word, v + j0, static_cast<std::size_t>(n) * sizeof(float));
            unsigned bits = 0;
            for (int k = 0; k < 8; ++k) bits |= static_cast<unsigned>((word[k] & 0x7FFFFFFFu) != 0u) << k;
            out[byte] = static_cast<std::uint8_t>(bits);
          }
        }
      },
      64);
}

// x · scale & mask for n <= 8 values, the mask of one byte of bits: the product and the AND of
// dropout's own pass (kernels/cpu/dropout.cpp), so the same bits. Whole bytes run as 8 lanes.
inline void select_byte(float* v, std::uint8_t bits, float scale, std::int64_t n) {
  const std::uint32_t* mask = byte_masks.m[bits];
  float kept[8];
  std::uint32_t value[8];
  if (n == 8) {
    for (int k = 0; k < 8; ++k) kept[k] = v[k] * scale;
    std::memcpy(value, kept, sizeof value);
    for (int k = 0; k < 8; ++k) value[k] &= mask[k];
    std::memcpy(v, value, sizeof value);
    return;
  }
  for (std::int64_t k = 0; k < n; ++k) {
    kept[k] = v[k] * scale;
    std::memcpy(&value[k], &kept[k], sizeof(float));
    value[k] &= mask[k];
    std::memcpy(&v[k], &value[k], sizeof(float));
  }
}

// Rows [begin, end) of the chunk (x's values) become x · scale where their bit is set, else +0.
void select(const MaskBits& m, kernels::TensorView rows, std::int64_t first_row, float scale, std::int64_t begin,
            std::int64_t end) {
  parallel_for_ranges(
      begin, end,
      [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t r = b; r < e; ++r) {
          float* v = rows.row(r);
          const std::uint8_t* bits = m.bits.data() + (first_row + r) * m.row_bytes;
          const std::int64_t full = m.cols / 8;
          for (std::int64_t byte = 0; byte < full; ++byte) select_byte(v + 8 * byte, bits[byte], scale, 8);
          if (full < m.row_bytes) select_byte(v + 8 * full, bits[full], scale, m.cols - 8 * full);
        }
      },
      64);
}

}  // namespace

std::int64_t remembered_dropout_bytes(std::int64_t rows, std::int64_t cols) { return rows * (bytes_per_row(cols) + 1); }

RowTransform remembered_dropout_rows(float p, kernels::DropoutKey key, kernels::IndexView global_ids, std::int64_t rows,
                                     std::int64_t cols) {
  RowTransform draw = dropout_rows(p, key, global_ids);
  if (!draw) return {};
  HALO_EXPECTS(rows >= 0 && cols >= 0,
               "remembered_dropout_rows: a matrix of " + std::to_string(rows) + " x " + std::to_string(cols));
  auto m = std::make_shared<MaskBits>();
  m->rows = rows;
  m->cols = cols;
  m->row_bytes = bytes_per_row(cols);
  const float scale = kernels::dropout_scale(p);
  return [m, draw = std::move(draw), scale](kernels::TensorView chunk, std::int64_t first_row) {
    if (chunk.device.is_cuda()) {
      draw(chunk, first_row);
      return;
    }
    HALO_EXPECTS(chunk.cols == m->cols && first_row >= 0 && first_row + chunk.rows <= m->rows,
                 "remembered_dropout_rows: rows [" + std::to_string(first_row) + ", " +
                     std::to_string(first_row + chunk.rows) + ") of " + std::to_string(chunk.cols) +
                     " columns are not within its " + std::to_string(m->rows) + " x " + std::to_string(m->cols));
    if (m->bits.empty() && m->rows > 0) {
      m->bits.assign(static_cast<std::size_t>(m->rows * m->row_bytes), 0);
      m->drawn.assign(static_cast<std::size_t>(m->rows), 0);
    }
    // Runs of rows drawn before (select by their bits) and not (draw them, keep their bits).
    for (std::int64_t begin = 0; begin < chunk.rows;) {
      const bool drawn = m->drawn[static_cast<std::size_t>(first_row + begin)] != 0;
      std::int64_t end = begin + 1;
      while (end < chunk.rows && (m->drawn[static_cast<std::size_t>(first_row + end)] != 0) == drawn) ++end;
      if (drawn) {
        select(*m, chunk, first_row, scale, begin, end);
      } else {
        draw(chunk.slice_rows(begin, end), first_row + begin);
        record(*m, chunk, first_row, begin, end);
        std::fill(m->drawn.begin() + first_row + begin, m->drawn.begin() + first_row + end, char{1});
      }
      begin = end;
    }
  };
}

}  // namespace halo::train
