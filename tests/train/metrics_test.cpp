// Tests of train/metrics.*: mean, sample standard deviation and median against hand-computed values.
#include "train/metrics.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using namespace halo::train;

TEST_CASE("mean and sample_std match the textbook values", "[train]") {
  // Σ = 40, n = 8, mean 5; Σ (x - 5)² = 9+1+1+1+0+0+4+16 = 32; sample variance 32 / 7.
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  CHECK(mean(v) == Approx(5.0));
  CHECK(sample_std(v) == Approx(std::sqrt(32.0 / 7.0)));
  CHECK(sample_std({3.5}) == 0.0);
  CHECK(std::isnan(mean({})));
}

TEST_CASE("median takes the middle value, or the mean of the two middle ones", "[train]") {
  CHECK(median({5, 1, 3}) == 3.0);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(std::isnan(median({})));
}
