// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11). A value depends only on
// (seed, stream, position), never on thread count or call order, so parallel generators,
// dropout masks and sampling decisions are reproducible and partition-invariant: key the stream
// on what identifies the decision (epoch, layer, global vertex id, ...).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "graph/base/host_device.hpp"

// The counter-based functions below are also compiled for CUDA devices (kernels/cuda/dropout.cu
// draws the very same bits as the CPU), so they use plain integers only.

namespace halo {

// One Philox4x32-10 block in place: c0..c3 (the 128-bit counter) become the four 32-bit outputs
// for the 64-bit key.
HALO_HOST_DEVICE inline void philox4x32_block(std::uint32_t& c0, std::uint32_t& c1, std::uint32_t& c2,
                                              std::uint32_t& c3, std::uint64_t key) {
  constexpr std::uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  constexpr std::uint32_t w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
  std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(m0) * c0;
    const std::uint64_t p1 = static_cast<std::uint64_t>(m1) * c2;
    const std::uint32_t n0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const std::uint32_t n2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c0 = n0;
    c1 = static_cast<std::uint32_t>(p1);
    c2 = n2;
    c3 = static_cast<std::uint32_t>(p0);
    k0 += w0;
    k1 += w1;
  }
}

// One Philox4x32-10 block: four 32-bit outputs for a 128-bit counter and a 64-bit key.
inline std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> ctr, std::uint64_t key) {
  philox4x32_block(ctr[0], ctr[1], ctr[2], ctr[3], key);
  return ctr;
}

// Uniform float in [0, 1) from 32 random bits (24 significant bits).
inline float to_unit_float(std::uint32_t bits) { return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f); }
// Uniform double in [0, 1) from 64 random bits (53 significant bits).
inline double to_unit_double(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

// A sequential stream of random numbers identified by (seed, stream id); position i of the
// stream is philox(counter = {i, stream}, key = seed). Cheap to create: make one per vertex,
// per chunk or per decision.
class RandomStream {
 public:
  RandomStream(std::uint64_t seed, std::uint64_t stream) : seed_(seed), stream_(stream) {}

  std::uint32_t next_u32() {
    if (used_ == 4) refill();
    return block_[used_++];
  }
  std::uint64_t next_u64() {
    const std::uint64_t hi = next_u32();
    return (hi << 32) | next_u32();
  }
  // Uniform in [0, 1).
  double uniform() { return to_unit_double(next_u64()); }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-32 for n < 2^32).
  std::uint64_t below(std::uint64_t n) {
    if (n <= 0xFFFFFFFFull) return (static_cast<std::uint64_t>(next_u32()) * n) >> 32;
    return next_u64() % n;
  }
  // Continues from the word-th 32-bit value of the stream (uniform() takes two words, next_u32
  // one), so a caller can draw any part of a long stream without drawing what comes before.
  void seek(std::uint64_t word) {
    position_ = word / 4;
    refill();
    used_ = static_cast<int>(word % 4);
  }
  // Standard normal (Box-Muller).
  double normal() {
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  void refill() {
    block_ = philox4x32({static_cast<std::uint32_t>(position_), static_cast<std::uint32_t>(position_ >> 32),
                         static_cast<std::uint32_t>(stream_), static_cast<std::uint32_t>(stream_ >> 32)},
                        seed_);
    ++position_;
    used_ = 0;
  }

  std::uint64_t seed_;
  std::uint64_t stream_;
  std::uint64_t position_ = 0;
  std::array<std::uint32_t, 4> block_{};
  int used_ = 4;
};

// Mixes several identifiers into one 64-bit stream id (splitmix64 finaliser), e.g.
// stream_id(epoch, layer) for dropout or stream_id(kind, chunk) for a generator pass.
HALO_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
HALO_HOST_DEVICE inline std::uint64_t stream_id(std::uint64_t a, std::uint64_t b) { return mix64(mix64(a) ^ b); }
HALO_HOST_DEVICE inline std::uint64_t stream_id(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return stream_id(stream_id(a, b), c);
}

}  // namespace halo
