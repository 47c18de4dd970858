// Tests of kernels/cuda/spmm_choice.*: the automatic SpMM choice from measured times (medians,
// ties, implementations that could not run) and its per-(graph, width) cache. Plain C++: these
// run on every machine, GPU or not.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "kernels/cuda/spmm_choice.hpp"

using namespace halo::kernels::cuda;

TEST_CASE("choose_spmm_impl keeps the implementation with the lower median time", "[kernels]") {
  // Medians 2.0 (halo) and 1.5 (cuSPARSE): the outlier 9.0 of cuSPARSE does not matter.
  CHECK(choose_spmm_impl({2.0, 1.0, 3.0}, {1.5, 9.0, 1.4}) == SpmmImpl::cusparse);
  CHECK(choose_spmm_impl({1.0, 1.2, 1.1}, {1.5, 1.4, 1.3}) == SpmmImpl::halo);
  // Even counts take the mean of the middle two: halo (1 + 3) / 2 = 2, cuSPARSE (2.5 + 2.5) / 2.
  CHECK(choose_spmm_impl({1.0, 3.0, 0.5, 4.0}, {2.5, 2.5, 0.1, 9.0}) == SpmmImpl::halo);
}

TEST_CASE("choose_spmm_impl prefers halo's kernel on a tie", "[kernels]") {
  CHECK(choose_spmm_impl({1.0, 2.0, 3.0}, {3.0, 2.0, 1.0}) == SpmmImpl::halo);
}

TEST_CASE("choose_spmm_impl never keeps an implementation that could not run", "[kernels]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(choose_spmm_impl({5.0}, {}) == SpmmImpl::halo);
  CHECK(choose_spmm_impl({5.0}, {0.1, nan}) == SpmmImpl::halo);
  CHECK(choose_spmm_impl({5.0}, {0.1, -1.0}) == SpmmImpl::halo);
  CHECK(choose_spmm_impl({}, {0.1}) == SpmmImpl::cusparse);
  CHECK(choose_spmm_impl({inf}, {7.0}) == SpmmImpl::cusparse);
  CHECK(choose_spmm_impl({}, {}) == SpmmImpl::halo);
}

TEST_CASE("median_time is the middle of the valid times and nothing for invalid ones", "[kernels]") {
  CHECK(median_time({3.0, 1.0, 2.0}) == 2.0);
  CHECK(median_time({4.0, 1.0}) == 2.5);
  CHECK_FALSE(median_time({}).has_value());
  CHECK_FALSE(median_time({1.0, std::nan("")}).has_value());
}

TEST_CASE("SpmmChoiceCache keeps one choice per graph and width, and forgets a graph", "[kernels]") {
  SpmmChoiceCache cache;
  CHECK_FALSE(cache.find({7, 64}).has_value());
  cache.store({7, 64}, SpmmImpl::cusparse);
  cache.store({7, 128}, SpmmImpl::halo);
  cache.store({8, 64}, SpmmImpl::halo);
  CHECK(cache.find({7, 64}) == SpmmImpl::cusparse);
  CHECK(cache.find({7, 128}) == SpmmImpl::halo);
  CHECK(cache.find({8, 64}) == SpmmImpl::halo);
  CHECK_FALSE(cache.find({7, 256}).has_value());
  CHECK(cache.size() == 3);
  cache.store({7, 64}, SpmmImpl::halo);
  CHECK(cache.find({7, 64}) == SpmmImpl::halo);
  cache.forget_graph(7);
  CHECK(cache.size() == 1);
  CHECK_FALSE(cache.find({7, 128}).has_value());
  CHECK(cache.find({8, 64}) == SpmmImpl::halo);
}

TEST_CASE("SpmmChoiceCache serves several threads at once", "[kernels]") {
  SpmmChoiceCache cache;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&cache, t] {
      for (std::int64_t w = 0; w < 200; ++w) {
        cache.store({static_cast<std::uint64_t>(t), w}, w % 2 == 0 ? SpmmImpl::halo : SpmmImpl::cusparse);
        (void)cache.find({static_cast<std::uint64_t>((t + 1) % 4), w});
      }
    });
  for (auto& thread : threads) thread.join();
  CHECK(cache.size() == 800);
  CHECK(cache.find({3, 199}) == SpmmImpl::cusparse);
}
