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
//
// bias_relu_dropout applies y = relu(y + bias) to each value before the mask in the same pass: the
// same float add, select and product as add_bias, relu_forward and dropout in turn, so the same bits.
//
// Philox is drawn for a batch of blocks at once, the (row, block) pairs of a row range laid end to
// end, so that the compiler runs the 10 rounds over many blocks in vector registers (a 32 x 32 ->
// 64-bit multiply per lane); one block at a time, the rounds are a chain of dependent multiplies.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "graph/base/parallel.hpp"
#include "graph/base/random.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/row_loop.hpp"
#include "kernels/dropout.hpp"

namespace halo::kernels::cpu {
namespace {

// Blocks per batch: two AVX-512 (four AVX2) vectors per counter word, enough independent lanes
// to hide the multiply latency, and the batch state (about 2 KiB) stays in L1.
constexpr int batch = 32;
// Values per parallel chunk: a few batches, so scheduling costs little against the work.
constexpr std::int64_t values_per_chunk = 8192;

struct MaskParams {
  std::uint64_t key;
  std::uint32_t threshold;  // ceil(p · 65536): kept when the 16-bit draw is at least this
  float scale;
};

// What the pass does to a value before the mask: nothing (dropout), ReLU, or ReLU of value + bias.
enum class Epilogue { none, relu, bias_relu };

// The value before the mask: add_bias's sum, then relu_forward's select.
template <Epilogue E>
inline __attribute__((always_inline)) float before_mask(float v, const float* __restrict bias, std::int64_t j) {
  if constexpr (E == Epilogue::bias_relu) v += bias[j];
  if constexpr (E != Epilogue::none) v = v > 0.0f ? v : 0.0f;
  return v;
}

// Consecutive blocks [first_block, first_block + count) of one row, drawn in batch slots
// [slot, slot + count).
struct Segment {
  std::int64_t row;
  std::int64_t first_block;
  int slot;
  int count;
};

// Philox of every slot of the batch, counters in place. The loop over slots is the one the
// compiler vectorises (philox4x32_block's rounds unroll inside it).
inline __attribute__((always_inline)) void philox_batch(std::uint32_t* __restrict c0, std::uint32_t* __restrict c1,
                                                        std::uint32_t* __restrict c2, std::uint32_t* __restrict c3,
                                                        std::uint64_t key) {
  for (int k = 0; k < batch; ++k) philox4x32_block(c0[k], c1[k], c2[k], c3[k], key);
}

// The 16-bit draws in column order: draw 8 · k + l belongs to lane l of the block in slot k.
inline __attribute__((always_inline)) void spread_draws(const std::uint32_t* __restrict c0,
                                                        const std::uint32_t* __restrict c1,
                                                        const std::uint32_t* __restrict c2,
                                                        const std::uint32_t* __restrict c3,
                                                        std::uint32_t* __restrict draws) {
  for (int k = 0; k < batch; ++k) {
    draws[8 * k + 0] = c0[k] & 0xFFFFu;
    draws[8 * k + 1] = c0[k] >> 16;
    draws[8 * k + 2] = c1[k] & 0xFFFFu;
    draws[8 * k + 3] = c1[k] >> 16;
    draws[8 * k + 4] = c2[k] & 0xFFFFu;
    draws[8 * k + 5] = c2[k] >> 16;
    draws[8 * k + 6] = c3[k] & 0xFFFFu;
    draws[8 * k + 7] = c3[k] >> 16;
  }
}

// out[j] = kept ? in[j] · scale : 0 for n values. `in` and `out` may be the same row (in-place
// backward); each value is read before it is written at the same index, so there is no
// dependence between iterations and ivdep lets the loop vectorise without an overlap check.
// The select is a bit mask on the product (all ones or +0.0f's all zeros): a conditional
// product is a possibly trapping operation the compiler will not vectorise without masked
// instructions, which AVX2 and SSE lack.
template <Epilogue E>
inline __attribute__((always_inline)) void apply_draws(const float* in, const float* __restrict bias, float* out,
                                                       const std::uint32_t* __restrict draws, std::int64_t n,
                                                       std::uint32_t threshold, float scale) {
#pragma GCC ivdep
  for (std::int64_t j = 0; j < n; ++j) {
    const float kept = before_mask<E>(in[j], bias, j) * scale;
    std::uint32_t bits;
    std::memcpy(&bits, &kept, sizeof bits);
    bits &= 0u - static_cast<std::uint32_t>(draws[j] >= threshold);
    std::memcpy(&out[j], &bits, sizeof bits);
  }
}

// Rows [begin, end), compiled for AVX-512, AVX2 and the x86-64 baseline and picked once at load
// time by the CPU it runs on (GCC's target_clones), as kernels/cpu/spmm.cpp does: a portable
// build still uses the wide multiplies. The mask is integer work and the one float operation is
// a single product (and the epilogue's add and select), so every clone produces the same bits.
// `bias`: cols values for Epilogue::bias_relu, else unused.
__attribute__((target_clones("avx512f", "avx2", "default")))
void dropout_rows(ConstTensorView x, TensorView y, const std::int64_t* global_ids, const MaskParams& mask,
                  Epilogue epilogue, const float* bias, std::int64_t begin, std::int64_t end) {
  const std::int64_t cols = x.cols;
  const std::int64_t blocks_per_row = (cols + 7) / 8;
  // Slots past the last filled one in a final, partial batch are drawn from stale counters and
  // never applied; zeroing them once keeps every read initialised.
  alignas(64) std::uint32_t c0[batch] = {}, c1[batch] = {}, c2[batch] = {}, c3[batch] = {};
  alignas(64) std::uint32_t draws[8 * batch];
  Segment segments[batch];
  std::int64_t row = begin, block = 0;  // the next (row, block) pair to draw
  while (row < end) {
    int filled = 0, num_segments = 0;
    while (filled < batch && row < end) {
      const auto g = static_cast<std::uint64_t>(global_ids != nullptr ? global_ids[row] : row);
      const int count = static_cast<int>(std::min<std::int64_t>(batch - filled, blocks_per_row - block));
      for (int t = 0; t < count; ++t) {
        const auto b = static_cast<std::uint64_t>(block + t);
        c0[filled + t] = static_cast<std::uint32_t>(b);
        c1[filled + t] = static_cast<std::uint32_t>(b >> 32);
        c2[filled + t] = static_cast<std::uint32_t>(g);
        c3[filled + t] = static_cast<std::uint32_t>(g >> 32);
      }
      segments[num_segments++] = {row, block, filled, count};
      filled += count;
      block += count;
      if (block == blocks_per_row) {
        block = 0;
        ++row;
      }
    }
    philox_batch(c0, c1, c2, c3, mask.key);
    spread_draws(c0, c1, c2, c3, draws);
    for (int s = 0; s < num_segments; ++s) {
      const Segment& seg = segments[s];
      const std::int64_t j0 = 8 * seg.first_block;
      const std::int64_t n = std::min<std::int64_t>(cols - j0, 8 * static_cast<std::int64_t>(seg.count));
      const float* in = x.row(seg.row) + j0;
      float* out = y.row(seg.row) + j0;
      const std::uint32_t* d = draws + 8 * seg.slot;
      if (epilogue == Epilogue::bias_relu)
        apply_draws<Epilogue::bias_relu>(in, bias + j0, out, d, n, mask.threshold, mask.scale);
      else if (epilogue == Epilogue::relu)
        apply_draws<Epilogue::relu>(in, nullptr, out, d, n, mask.threshold, mask.scale);
      else
        apply_draws<Epilogue::none>(in, nullptr, out, d, n, mask.threshold, mask.scale);
    }
  }
}

// y = relu(x (+ bias)) without a mask (p = 0), the same add and select.
template <Epilogue E>
void epilogue_rows(ConstTensorView x, TensorView y, const float* bias) {
  for_rows(x.rows, x.cols, [&](std::int64_t i) {
    const float* in = x.row(i);
    float* out = y.row(i);
    for (std::int64_t j = 0; j < x.cols; ++j) out[j] = before_mask<E>(in[j], bias, j);
  });
}

void masked(ConstTensorView x, TensorView y, float p, DropoutKey key, IndexView global_ids, Epilogue epilogue,
            const float* bias) {
  if (x.rows == 0 || x.cols == 0) return;
  const MaskParams mask{stream_id(key.seed, key.epoch, key.layer),
                        static_cast<std::uint32_t>(std::ceil(static_cast<double>(p) * 65536.0)),
                        dropout_scale(p)};
  parallel_for_ranges(
      0, x.rows,
      [&](std::int64_t begin, std::int64_t end) {
        dropout_rows(x, y, global_ids.data, mask, epilogue, bias, begin, end);
      },
      std::max<std::int64_t>(1, values_per_chunk / x.cols));
}

}  // namespace

void dropout(ConstTensorView x, TensorView y, float p, DropoutKey key, IndexView global_ids) {
  if (p == 0.0f) {
    cpu::copy(x, y);
    return;
  }
  masked(x, y, p, key, global_ids, Epilogue::none, nullptr);
}

void bias_relu_dropout(TensorView y, ConstTensorView bias, float p, DropoutKey key, IndexView global_ids) {
  const Epilogue epilogue = bias.data != nullptr ? Epilogue::bias_relu : Epilogue::relu;
  if (p > 0.0f) {
    masked(y, y, p, key, global_ids, epilogue, bias.data);
  } else if (epilogue == Epilogue::bias_relu) {
    epilogue_rows<Epilogue::bias_relu>(y, y, bias.data);
  } else {
    epilogue_rows<Epilogue::relu>(y, y, nullptr);
  }
}

}  // namespace halo::kernels::cpu
