// Tests of sampling/boundary_sampler.*: the keep decision is a pure function of its key, keeps
// about `rate` of the vertices independently per epoch and receiver, and rate 1 keeps all.
#include "sampling/boundary_sampler.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "graph/base/error.hpp"

using halo::sampling::BoundarySampler;

TEST_CASE("BoundarySampler keeps about rate of the vertices, the same ones for the same key", "[sampling]") {
  const double rate = GENERATE(0.1, 0.5);
  const BoundarySampler s(rate, 42);
  const BoundarySampler again(rate, 42);
  const std::int64_t n = 200000;
  std::int64_t kept = 0, same = 0, both_epochs = 0, both_receivers = 0;
  for (std::int64_t g = 0; g < n; ++g) {
    const bool k = s.keep(7, 2, g);
    kept += k;
    same += k == again.keep(7, 2, g);
    both_epochs += k && s.keep(8, 2, g);
    both_receivers += k && s.keep(7, 3, g);
  }
  const double sigma = std::sqrt(rate * (1 - rate) / static_cast<double>(n));
  CHECK(std::abs(static_cast<double>(kept) / n - rate) < 5 * sigma);
  CHECK(same == n);
  // Another epoch or another receiver draws independently: the overlap is about rate².
  CHECK(std::abs(static_cast<double>(both_epochs) / n - rate * rate) < 0.01);
  CHECK(std::abs(static_cast<double>(both_receivers) / n - rate * rate) < 0.01);
  CHECK(s.scale() == Approx(1.0 / rate));
}

TEST_CASE("BoundarySampler at rate 1 keeps every vertex and refuses rates outside 0 < rate <= 1", "[sampling]") {
  const BoundarySampler all(1.0, 3);
  for (std::int64_t g = 0; g < 1000; ++g) CHECK(all.keep(1, 0, g));
  CHECK(all.keeps_all());
  CHECK_THROWS_AS(BoundarySampler(0.0, 1), halo::InvalidArgument);
  CHECK_THROWS_AS(BoundarySampler(1.5, 1), halo::InvalidArgument);
}
