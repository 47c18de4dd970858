// BoundarySampler: the keyed Bernoulli decision of each halo vertex.
#include "sampling/boundary_sampler.hpp"

#include <string>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"

namespace halo::sampling {
namespace {

// Separates the sampler's random streams from dropout's and the initialisers'.
constexpr std::uint64_t boundary_stream = 0x626e732d67636e31ULL;  // "bns-gcn1"

}  // namespace

BoundarySampler::BoundarySampler(double rate, std::uint64_t seed) : rate_(rate), seed_(seed) {
  HALO_EXPECTS(rate > 0.0 && rate <= 1.0, "boundary sample rate must be in (0, 1], got " + std::to_string(rate));
}

bool BoundarySampler::keep(std::uint64_t epoch, int receiver, std::int64_t global_id) const {
  if (keeps_all()) return true;
  const std::uint64_t key = stream_id(seed_, boundary_stream, epoch);
  const auto g = static_cast<std::uint64_t>(global_id);
  const std::array<std::uint32_t, 4> bits = philox4x32(
      {static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(g >> 32), static_cast<std::uint32_t>(receiver), 0u},
      key);
  const std::uint64_t draw = (static_cast<std::uint64_t>(bits[0]) << 32) | bits[1];
  return to_unit_double(draw) < rate_;
}

}  // namespace halo::sampling
