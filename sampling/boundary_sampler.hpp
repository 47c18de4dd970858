// Boundary-vertex sampling (BNS-GCN, Wan et al., MLSys 2022) for distributed full-graph training:
// each epoch, every rank keeps each of its halo (boundary) vertices with probability p; only the
// kept rows travel, scaled by 1/p, so the aggregation stays an unbiased estimate of the full one
// and its adjoint is exact for the sampled operator. The decision is a pure function of
// (seed, epoch, receiving rank, global vertex id), so the owner that sends a row and the rank that
// receives it agree without exchanging a word. Rate 1 keeps every vertex (exact training).
#pragma once

#include <cstdint>

namespace halo::sampling {

class BoundarySampler {
 public:
  // rate in (0, 1]; throws InvalidArgument otherwise.
  BoundarySampler(double rate, std::uint64_t seed);

  // Whether halo vertex `global_id` of rank `receiver` is kept in `epoch`. O(1), one Philox call.
  bool keep(std::uint64_t epoch, int receiver, std::int64_t global_id) const;
  double rate() const { return rate_; }
  // The factor kept rows are multiplied by (1 / rate).
  float scale() const { return static_cast<float>(1.0 / rate_); }
  bool keeps_all() const { return rate_ >= 1.0; }

 private:
  double rate_;
  std::uint64_t seed_;
};

}  // namespace halo::sampling
