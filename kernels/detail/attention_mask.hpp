// The attention-dropout mask of kernels/attention.hpp, shared by the CPU and CUDA twins (compiled
// for both), so both keep exactly the same coefficients:
//   key64     = stream_id(stream_id(seed, epoch, layer), attention_stream)
//   bits      = philox4x32({src_lo, (src_hi & 0xFFFF) | (head / 8) << 16, dst_lo, dst_hi}, key64)
//               (src, dst: the global ids of the edge's source and destination, below 2^48)
//   u         = 16-bit half (head % 2) of word bits[(head % 8) / 2], low half first
//   keep      = u >= ceil(p · 65536)
// The stream differs from feature dropout's (kernels/dropout.hpp) of the same layer, so the two
// masks are independent.
#pragma once

#include <cmath>
#include <cstdint>

#include "graph/base/host_device.hpp"
#include "graph/base/random.hpp"
#include "kernels/dropout.hpp"

namespace halo::kernels::detail {

// "attn" in ASCII: the stream of the attention masks within a layer's key.
constexpr std::uint64_t attention_stream = 0x6174746eull;

inline std::uint64_t attention_key64(const DropoutKey& key) {
  return stream_id(stream_id(key.seed, key.epoch, key.layer), attention_stream);
}

inline std::uint32_t attention_threshold(float p) {
  return static_cast<std::uint32_t>(std::ceil(static_cast<double>(p) * 65536.0));
}

// The Philox counter of heads [8 · block, 8 · block + 8) of the edge dst <- src.
HALO_HOST_DEVICE inline void attention_counter(std::uint64_t dst, std::uint64_t src, std::uint64_t block,
                                               std::uint32_t& c0, std::uint32_t& c1, std::uint32_t& c2,
                                               std::uint32_t& c3) {
  c0 = static_cast<std::uint32_t>(src);
  c1 = (static_cast<std::uint32_t>(src >> 32) & 0xFFFFu) | static_cast<std::uint32_t>(block << 16);
  c2 = static_cast<std::uint32_t>(dst);
  c3 = static_cast<std::uint32_t>(dst >> 32);
}

// The 16-bit draws of heads [8 · block, 8 · block + 8) of the edge dst <- src: draw l is word
// bits[l / 2]'s half l % 2.
HALO_HOST_DEVICE inline void attention_draws(std::uint64_t key64, std::uint64_t dst, std::uint64_t src,
                                             std::uint64_t block, std::uint32_t bits[4]) {
  attention_counter(dst, src, block, bits[0], bits[1], bits[2], bits[3]);
  philox4x32_block(bits[0], bits[1], bits[2], bits[3], key64);
}

HALO_HOST_DEVICE inline bool attention_kept(const std::uint32_t bits[4], std::int64_t head, std::uint32_t threshold) {
  const int l = static_cast<int>(head % 8);
  return ((bits[l / 2] >> (16 * (l % 2))) & 0xFFFFu) >= threshold;
}

}  // namespace halo::kernels::detail
