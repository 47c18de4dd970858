// Tests of kernels/cpu/vector_exp.hpp: exp and expm1 in float against libm's double-precision ones over
// the whole clamped range and near zero (where expm1 must keep its relative accuracy), the
// clamping at both ends, and NaN passed through; exp in double against long double.
#include "kernels/cpu/vector_exp.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <algorithm>
#include <limits>

using namespace halo::kernels::cpu;

namespace {

// The largest |f(x) - reference(x)| / |reference(x)| in units of float's epsilon, over n points
// spread evenly on [lo, hi].
template <class F, class R>
double worst_relative_error(F f, R reference, double lo, double hi, int n) {
  double worst = 0.0;
  for (int k = 0; k <= n; ++k) {
    const auto x = static_cast<float>(lo + (hi - lo) * k / n);
    const double want = reference(static_cast<double>(x));
    if (want == 0.0) continue;
    worst = std::max(worst, std::abs(static_cast<double>(f(x)) - want) / std::abs(want));
  }
  return worst / std::numeric_limits<float>::epsilon();
}

}  // namespace

TEST_CASE("vector_exp is within 3 ulp of exp over the clamped range", "[kernels]") {
  const auto f = [](float x) { return vector_exp(x); };
  const auto exact = [](double x) { return std::exp(x); };
  CHECK(worst_relative_error(f, exact, -87.0, 88.0, 2000003) < 3.0);
  CHECK(worst_relative_error(f, exact, -1.0, 1.0, 200001) < 3.0);
  CHECK(vector_exp(0.0f) == 1.0f);
  // Clamped: below -87 the result stays exp(-87), a normal float; above 88 it stays exp(88).
  CHECK(vector_exp(-1000.0f) == vector_exp(-87.0f));
  CHECK(std::isnormal(vector_exp(-1000.0f)));
  CHECK(vector_exp(1000.0f) == vector_exp(88.0f));
  CHECK(std::isfinite(vector_exp(1000.0f)));
  CHECK(std::isnan(vector_exp(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("vector_expm1 is within 3 ulp of expm1 far from zero and near it", "[kernels]") {
  const auto f = [](float x) { return vector_expm1(x); };
  const auto exact = [](double x) { return std::expm1(x); };
  CHECK(worst_relative_error(f, exact, -87.0, 88.0, 2000003) < 3.0);
  CHECK(worst_relative_error(f, exact, -0.4, 0.4, 400001) < 3.0);
  CHECK(worst_relative_error(f, exact, -1e-6, 1e-6, 20001) < 3.0);
  CHECK(vector_expm1(0.0f) == 0.0f);
  CHECK(vector_expm1(-1000.0f) == -1.0f);
  CHECK(std::isnan(vector_expm1(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("vector_exp in double is within 4 ulp of exp over the clamped range", "[kernels]") {
  double worst = 0.0;
  for (int k = 0; k <= 2000003; ++k) {
    const double x = -708.0 + 1417.0 * k / 2000003;
    const long double want = std::exp(static_cast<long double>(x));
    worst = std::max(worst, static_cast<double>(std::abs((vector_exp(x) - want) / want)));
  }
  CHECK(worst / std::numeric_limits<double>::epsilon() < 4.0);
  CHECK(vector_exp(0.0) == 1.0);
  CHECK(vector_exp(-1e6) == vector_exp(-708.0));
  CHECK(std::isnan(vector_exp(std::numeric_limits<double>::quiet_NaN())));
}
