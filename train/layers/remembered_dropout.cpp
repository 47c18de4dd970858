// remembered_dropout: the mask drawn once per row (Philox) as the rows are copied, later passes copying
// and selecting by its bits.
#include "train/layers/remembered_dropout.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::train {
namespace {

// A row's bits: one byte per 8 values, bit k of byte b for value 8 · b + k.
std::int64_t bytes_per_row(std::int64_t cols) { return (cols + 7) / 8; }
// A row's record: a byte saying whether the row is drawn, then its bits, padded to whole floats.
std::int64_t record_stride(std::int64_t cols) { return (1 + bytes_per_row(cols) + 3) / 4 * 4; }

// What a reader keeps: per row whether it is drawn and its bits, in a host tensor's storage, so
// that the tensor counters (and the memory plan's tests against them) see it.
struct MaskBits {
  std::int64_t rows = 0, cols = 0, stride = 0;
  kernels::Tensor storage;  // rows x stride / 4 floats' bytes, zeroed at the first pass
  std::uint8_t* drawn(std::int64_t r) { return reinterpret_cast<std::uint8_t*>(storage.data()) + r * stride; }
  std::uint8_t* bits(std::int64_t r) { return drawn(r) + 1; }
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

// One row's bits from its dropped values: a value is kept exactly when a bit other than the
// sign's is set. The row functions below are compiled for AVX-512, AVX2 and the x86-64 baseline
// and picked once at load time (GCC's target_clones, as kernels/cpu/dropout.cpp); integer tests
// and one float product, so every clone gives the same bits.
__attribute__((target_clones("avx512f", "avx2", "default"))) void record_row(const float* v, std::uint8_t* out,
                                                                             std::int64_t cols) {
  const std::int64_t full = cols / 8;
  for (std::int64_t byte = 0; byte < full; ++byte) {
    std::uint32_t word[8], flag[8];
    std::memcpy(word, v + 8 * byte, sizeof word);
    for (int k = 0; k < 8; ++k) flag[k] = (word[k] & 0x7FFFFFFFu) != 0u ? 1u << k : 0u;  // a compare and an AND
    out[byte] =
        static_cast<std::uint8_t>(flag[0] | flag[1] | flag[2] | flag[3] | flag[4] | flag[5] | flag[6] | flag[7]);
  }
  if (8 * full < cols) {
    unsigned bits = 0;
    for (std::int64_t k = 0; 8 * full + k < cols; ++k) {
      std::uint32_t word;
      std::memcpy(&word, v + 8 * full + k, sizeof word);
      bits |= static_cast<unsigned>((word & 0x7FFFFFFFu) != 0u) << k;
    }
    out[full] = static_cast<std::uint8_t>(bits);
  }
}

// One row: out = x · scale where its bit is set, else +0: the product and the AND of dropout's
// own pass (kernels/cpu/dropout.cpp), so the same bits; each byte's 8 masks from byte_masks.
__attribute__((target_clones("avx512f", "avx2", "default"))) void select_row(const float* x, float* out,
                                                                             const std::uint8_t* bits, float scale,
                                                                             std::int64_t cols) {
  const std::int64_t full = cols / 8;
  for (std::int64_t byte = 0; byte < full; ++byte) {
    const std::uint32_t* mask = byte_masks.m[bits[byte]];
    float kept[8];
    std::uint32_t value[8];
    for (int k = 0; k < 8; ++k) kept[k] = x[8 * byte + k] * scale;
    std::memcpy(value, kept, sizeof value);
    for (int k = 0; k < 8; ++k) value[k] &= mask[k];
    std::memcpy(out + 8 * byte, value, sizeof value);
  }
  for (std::int64_t j = 8 * full; j < cols; ++j) {
    const float kept = x[j] * scale;
    std::uint32_t value;
    std::memcpy(&value, &kept, sizeof value);
    value &= byte_masks.m[bits[full]][j - 8 * full];
    std::memcpy(&out[j], &value, sizeof value);
  }
}

// Rows [begin, end) of the chunk hold the dropout's values: keep their bits.
void record(MaskBits& m, kernels::ConstTensorView rows, std::int64_t first_row, std::int64_t begin, std::int64_t end) {
  parallel_for_ranges(
      begin, end,
      [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) record_row(rows.row(r), m.bits(first_row + r), m.cols);
      },
      64);
}

// Rows [begin, end) of the chunk become the source's x · scale where their bit is set, else +0.
void select(MaskBits& m, kernels::ConstTensorView source, kernels::TensorView chunk, std::int64_t first_row,
            float scale, std::int64_t begin, std::int64_t end) {
  parallel_for_ranges(
      begin, end,
      [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) select_row(source.row(r), chunk.row(r), m.bits(first_row + r), scale, m.cols);
      },
      64);
}

// kernels::dropout_forward of rows [begin, end) from the source into the chunk, row r keyed on
// global_ids[first_row + r] (or on its number).
void draw(kernels::ConstTensorView source, kernels::TensorView chunk, float p, kernels::DropoutKey key,
          kernels::IndexView global_ids, std::int64_t first_row, std::int64_t begin, std::int64_t end) {
  const kernels::ConstTensorView from = source.slice_rows(begin, end);
  const kernels::TensorView to = chunk.slice_rows(begin, end);
  if (global_ids.data != nullptr) {
    kernels::dropout_forward(from, to, p, key, {global_ids.data + first_row + begin, end - begin});
    return;
  }
  std::vector<std::int64_t> ids(static_cast<std::size_t>(end - begin));
  std::iota(ids.begin(), ids.end(), first_row + begin);
  kernels::dropout_forward(from, to, p, key, {ids.data(), end - begin});
}

}  // namespace

std::int64_t remembered_dropout_bytes(std::int64_t rows, std::int64_t cols, const kernels::Device& device) {
  return device.is_cuda() ? 0 : rows * record_stride(cols);
}

ChunkReader remembered_dropout(float p, kernels::DropoutKey key, kernels::IndexView global_ids, std::int64_t rows,
                               std::int64_t cols) {
  HALO_EXPECTS(p > 0.0f && p < 1.0f, "remembered_dropout: p must be in (0, 1), got " + std::to_string(p));
  HALO_EXPECTS(rows >= 0 && cols >= 0 && (global_ids.data == nullptr || global_ids.size >= rows),
               "remembered_dropout: a matrix of " + std::to_string(rows) + " x " + std::to_string(cols) + " with " +
                   std::to_string(global_ids.size) + " global ids");
  auto m = std::make_shared<MaskBits>();
  m->rows = rows;
  m->cols = cols;
  m->stride = record_stride(cols);
  const float scale = kernels::dropout_scale(p);
  return [m, p, key, global_ids, scale](kernels::ConstTensorView source, kernels::TensorView chunk,
                                        std::int64_t first_row) {
    HALO_EXPECTS(source.rows == chunk.rows && source.cols == m->cols && chunk.cols == m->cols && first_row >= 0 &&
                     first_row + chunk.rows <= m->rows,
                 "remembered_dropout: rows [" + std::to_string(first_row) + ", " +
                     std::to_string(first_row + chunk.rows) + ") of " + std::to_string(chunk.cols) +
                     " columns are not within its " + std::to_string(m->rows) + " x " + std::to_string(m->cols));
    if (chunk.device.is_cuda()) {
      draw(source, chunk, p, key, global_ids, first_row, 0, chunk.rows);
      return;
    }
    if (m->storage.empty() && m->rows > 0) m->storage = kernels::Tensor::zeros(m->rows, m->stride / 4);
    // Runs of rows drawn before (select by their bits) and not (draw them, keep their bits).
    for (std::int64_t begin = 0; begin < chunk.rows;) {
      const bool drawn = *m->drawn(first_row + begin) != 0;
      std::int64_t end = begin + 1;
      while (end < chunk.rows && (*m->drawn(first_row + end) != 0) == drawn) ++end;
      if (drawn) {
        select(*m, source, chunk, first_row, scale, begin, end);
      } else {
        draw(source, chunk, p, key, global_ids, first_row, begin, end);
        record(*m, chunk, first_row, begin, end);
        for (std::int64_t r = begin; r < end; ++r) *m->drawn(first_row + r) = 1;
      }
      begin = end;
    }
  };
}

InputMatrix dropped_as_read(const InputMatrix& x, float p, kernels::DropoutKey key, kernels::IndexView global_ids) {
  if (x.read_whole()) return x.read_with(remembered_dropout(p, key, global_ids, x.rows(), x.cols()));
  return x.then(dropout_rows(p, key, global_ids));
}

}  // namespace halo::train
