// Tests of graph/base/random.hpp: Philox4x32-10 against the Random123 known-answer vectors, and
// the statistics, determinism, independence and seeking of RandomStream.
#include "graph/base/random.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

using namespace halo;

namespace {

std::uint64_t key_of(std::uint32_t k0, std::uint32_t k1) { return k0 | (static_cast<std::uint64_t>(k1) << 32); }

}  // namespace

// The known-answer tests shipped with Random123 (kat_vectors, philox4x32 with 10 rounds).
TEST_CASE("philox4x32 reproduces the Random123 known-answer vectors", "[graph]") {
  using Block = std::array<std::uint32_t, 4>;
  CHECK(philox4x32({0, 0, 0, 0}, key_of(0, 0)) == Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, key_of(0xffffffff, 0xffffffff)) ==
        Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, key_of(0xa4093822, 0x299f31d0)) ==
        Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("RandomStream repeats itself for the same seed and stream", "[graph]") {
  RandomStream a(1234, 56), b(1234, 56);
  for (int i = 0; i < 1000; ++i) REQUIRE(a.next_u32() == b.next_u32());
  // Interleaving calls of different widths does not change what a fresh stream would give.
  RandomStream c(1234, 56), d(1234, 56);
  const std::uint64_t hi = d.next_u32(), lo = d.next_u32();
  CHECK(c.next_u64() == ((hi << 32) | lo));
}

TEST_CASE("RandomStream streams and seeds give unrelated sequences", "[graph]") {
  const int n = 200000;
  RandomStream base(7, 0), next_stream(7, 1), next_seed(8, 0);
  std::vector<double> x(n), y(n), z(n);
  for (int i = 0; i < n; ++i) {
    x[static_cast<std::size_t>(i)] = base.uniform() - 0.5;
    y[static_cast<std::size_t>(i)] = next_stream.uniform() - 0.5;
    z[static_cast<std::size_t>(i)] = next_seed.uniform() - 0.5;
  }
  double xy = 0, xz = 0, xx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    xy += x[i] * y[i];
    xz += x[i] * z[i];
    xx += x[i] * x[i];
  }
  // Correlations of independent uniforms are about N(0, 1/n): 1/sqrt(n) ~ 0.0022.
  CHECK(std::abs(xy / xx) < 0.012);
  CHECK(std::abs(xz / xx) < 0.012);
  // No shared blocks: the first 4096 words of the two streams do not overlap.
  RandomStream s0(7, 0), s1(7, 1);
  std::set<std::uint32_t> words;
  for (int i = 0; i < 4096; ++i) words.insert(s0.next_u32());
  int shared = 0;
  for (int i = 0; i < 4096; ++i) shared += static_cast<int>(words.count(s1.next_u32()));
  CHECK(shared <= 2);
  CHECK(stream_id(1, 2) != stream_id(2, 1));
  CHECK(stream_id(1, 2, 3) != stream_id(1, 2, 4));
}

TEST_CASE("RandomStream uniform, below and normal have the right moments", "[graph]") {
  const int n = 1000000;
  RandomStream rng(2024, stream_id(3, 4));
  double sum = 0, sum2 = 0;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    sum += u;
    sum2 += u * u;
  }
  const double mean = sum / n, var = sum2 / n - mean * mean;
  // Standard errors: mean 0.00029, variance 0.000075; allow five of them.
  CHECK(mean == Approx(0.5).margin(0.0015));
  CHECK(var == Approx(1.0 / 12.0).margin(0.0004));

  std::vector<int> bins(10, 0);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t k = rng.below(10);
    REQUIRE(k < 10);
    ++bins[static_cast<std::size_t>(k)];
  }
  double chi2 = 0;
  for (int b : bins) chi2 += (b - 10000.0) * (b - 10000.0) / 10000.0;
  CHECK(chi2 < 30.0);  // 9 degrees of freedom: P(chi2 > 30) < 0.001
  CHECK(rng.below(std::uint64_t{1} << 40) < (std::uint64_t{1} << 40));

  double nsum = 0, nsum2 = 0;
  for (int i = 0; i < 200000; ++i) {
    const double g = rng.normal();
    nsum += g;
    nsum2 += g * g;
  }
  CHECK(nsum / 200000 == Approx(0.0).margin(0.012));
  CHECK(nsum2 / 200000 == Approx(1.0).margin(0.02));
}

TEST_CASE("to_unit_float and to_unit_double stay inside the unit interval, 1 excluded", "[graph]") {
  CHECK(to_unit_float(0) == 0.0f);
  CHECK(to_unit_float(0xffffffffu) < 1.0f);
  CHECK(to_unit_double(0) == 0.0);
  CHECK(to_unit_double(~std::uint64_t{0}) < 1.0);
  CHECK(to_unit_float(0x80000000u) == 0.5f);
}

TEST_CASE("RandomStream::seek continues from any word of the stream", "[graph]") {
  RandomStream sequential(99, 7);
  std::vector<std::uint32_t> words;
  for (int i = 0; i < 23; ++i) words.push_back(sequential.next_u32());
  for (std::uint64_t start : {0u, 1u, 3u, 4u, 9u, 14u}) {
    CAPTURE(start);
    RandomStream sought(99, 7);
    sought.next_u32();  // a position before the seek does not matter
    sought.seek(start);
    for (std::size_t i = start; i < words.size(); ++i) CHECK(sought.next_u32() == words[i]);
  }
}
