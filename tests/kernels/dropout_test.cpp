// Tests of kernels/dropout.*: the documented Philox mask, the keep rate, the scaling, and that the
// mask depends only on (key, global vertex id, column): not on threads, row order or row subset.
// The CPU kernel draws Philox for batches of blocks (kernels/cpu/dropout.cpp); a scalar reference
// written from the documented definition checks it bit for bit over widths that cut the batches
// and the blocks of 8 columns in every way.
#include "kernels/dropout.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

// x with no zero entries, so a zero in the output always means "dropped".
Tensor nonzero_tensor(RandomStream& rng, std::int64_t rows, std::int64_t cols) {
  return test::random_tensor(rng, rows, cols, 0.5, 1.5);
}

// y[i, j] from the definition in kernels/cpu/dropout.cpp's header comment, one value at a time.
float reference_dropout(float x, float p, DropoutKey key, std::uint64_t global_id, std::int64_t column) {
  const auto block = static_cast<std::uint64_t>(column / 8);
  const std::array<std::uint32_t, 4> bits =
      philox4x32({static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                  static_cast<std::uint32_t>(global_id), static_cast<std::uint32_t>(global_id >> 32)},
                 stream_id(key.seed, key.epoch, key.layer));
  const std::uint32_t word = bits[static_cast<std::size_t>((column % 8) / 2)];
  const std::uint32_t u = column % 2 == 0 ? (word & 0xFFFFu) : (word >> 16);
  const auto threshold = static_cast<std::uint32_t>(std::ceil(static_cast<double>(p) * 65536.0));
  return u >= threshold ? x * (1.0f / (1.0f - p)) : 0.0f;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("dropout equals the scalar reference of its documented mask bit for bit for every width and p",
          "[kernels]") {
  RandomStream rng(68, 0);
  for (const std::int64_t cols : {1, 7, 8, 9, 64, 130}) {
    // More than two parallel chunks of 8192 values, and a row count that leaves partial batches.
    const std::int64_t rows = 2 * 8192 / cols + 37;
    // Negative inputs too: a dropped value must be +0.0f, never -0.0f.
    const Tensor x_dense = test::random_tensor(rng, rows, cols, -1.5, 1.5);
    const test::Strided x = test::strided_copy(x_dense, 3);
    std::vector<std::int64_t> ids(static_cast<std::size_t>(rows));
    for (std::int64_t& id : ids) id = static_cast<std::int64_t>(rng.next_u64() >> 20);  // past 2^32
    for (const float p : {0.1f, 0.5f, 0.9f})
      for (const bool with_ids : {false, true}) {
        const DropoutKey key{rng.next_u64(), 5, 1};
        test::Strided y(rows, cols, 2, std::numeric_limits<float>::quiet_NaN());
        test::with_threads(2, [&] { dropout_forward(x.view, y.view, p, key, with_ids ? test::index_view(ids) : IndexView{}); });
        std::int64_t mismatches = 0, kept = 0;
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < cols; ++j) {
            const auto gid = static_cast<std::uint64_t>(with_ids ? ids[static_cast<std::size_t>(i)] : i);
            const float expected = reference_dropout(x.view.row(i)[j], p, key, gid, j);
            mismatches += same_bits(y.view.row(i)[j], expected) ? 0 : 1;
            kept += expected != 0.0f ? 1 : 0;
          }
        CAPTURE(cols, p, with_ids, kept);
        CHECK(mismatches == 0);
        CHECK(y.padding_intact(std::numeric_limits<float>::quiet_NaN()));
      }
  }
}

TEST_CASE("dropout_forward keeps exactly the entries of the documented Philox mask, scaled by 1/(1-p)", "[kernels]") {
  RandomStream rng(61, 0);
  const Tensor x = nonzero_tensor(rng, 40, 19);  // 19 columns: a partial block of 8 at the end
  const DropoutKey key{7, 3, 2};
  const float p = 0.3f;
  const std::vector<std::int64_t> ids = {5, 1ll << 33, 0, 123456789012ll};
  for (const bool with_ids : {false, true}) {
    const std::int64_t rows = with_ids ? 4 : 40;
    Tensor y = test::poisoned(rows, 19);
    dropout_forward(x.view().slice_rows(0, rows), y.view(), p, key, with_ids ? test::index_view(ids) : IndexView{});
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < 19; ++j) {
        const auto gid = static_cast<std::uint64_t>(with_ids ? ids[static_cast<std::size_t>(i)] : i);
        const bool keep = test::naive_dropout_keeps(key.seed, key.epoch, key.layer, gid, j, p);
        const float expected = keep ? x.view().row(i)[j] * (1.0f / (1.0f - p)) : 0.0f;
        CAPTURE(with_ids, i, j);
        CHECK(y.view().row(i)[j] == expected);
      }
  }
}

TEST_CASE("dropout keeps a fraction 1 - p of the entries", "[kernels]") {
  RandomStream rng(62, 0);
  const Tensor x = nonzero_tensor(rng, 2000, 50);  // 100 000 entries
  for (const float p : {0.1f, 0.5f, 0.9f}) {
    Tensor y = test::poisoned(2000, 50);
    dropout_forward(x.view(), y.view(), p, DropoutKey{rng.next_u64(), 1, 0}, {});
    std::int64_t kept = 0;
    for (const float v : y.to_vector()) kept += v != 0.0f ? 1 : 0;
    const double rate = static_cast<double>(kept) / 100000.0;
    // 5 standard deviations of a binomial proportion.
    CHECK(std::fabs(rate - (1.0 - p)) < 5.0 * std::sqrt(p * (1.0 - p) / 100000.0));
  }
}

TEST_CASE("dropout masks are the same on 1, 2 and 3 threads", "[kernels]") {
  RandomStream rng(63, 0);
  const Tensor x = nonzero_tensor(rng, 3000, 19);
  Tensor one = test::poisoned(3000, 19);
  test::with_threads(1, [&] { dropout_forward(x.view(), one.view(), 0.4f, DropoutKey{1, 2, 3}, {}); });
  for (const int threads : {2, 3}) {
    Tensor other = test::poisoned(3000, 19);
    test::with_threads(threads, [&] { dropout_forward(x.view(), other.view(), 0.4f, DropoutKey{1, 2, 3}, {}); });
    CHECK(test::identical(one.view(), other.view()));
  }
}

TEST_CASE("a permuted subset of rows with their global ids sees the same mask values", "[kernels]") {
  RandomStream rng(64, 0);
  const std::int64_t n = 500, cols = 13;
  const Tensor x = nonzero_tensor(rng, n, cols);
  const DropoutKey key{99, 4, 1};
  Tensor full = test::poisoned(n, cols);
  dropout_forward(x.view(), full.view(), 0.5f, key, {});
  // A "rank" holding 120 of the vertices in a shuffled order, with their global ids.
  std::vector<std::int64_t> ids;
  for (std::int64_t v = 0; v < n; ++v) ids.push_back(v);
  for (std::int64_t k = n - 1; k > 0; --k)
    std::swap(ids[static_cast<std::size_t>(k)],
              ids[static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(k + 1)))]);
  ids.resize(120);
  Tensor local_x = Tensor::empty(120, cols);
  for (std::size_t i = 0; i < ids.size(); ++i)
    std::copy(x.view().row(ids[i]), x.view().row(ids[i]) + cols, local_x.view().row(static_cast<std::int64_t>(i)));
  Tensor local_y = test::poisoned(120, cols);
  dropout_forward(local_x.view(), local_y.view(), 0.5f, key, test::index_view(ids));
  bool same = true;
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      same = same && local_y.view().row(static_cast<std::int64_t>(i))[j] == full.view().row(ids[i])[j];
  CHECK(same);
}

TEST_CASE("dropout_backward applies the forward mask to the gradient, in place too", "[kernels]") {
  RandomStream rng(65, 0);
  const Tensor x = nonzero_tensor(rng, 60, 9);
  const DropoutKey key{5, 6, 7};
  Tensor y = test::poisoned(60, 9);
  dropout_forward(x.view(), y.view(), 0.25f, key, {});
  const Tensor grad_y = nonzero_tensor(rng, 60, 9);
  Tensor grad_x = grad_y.clone();
  dropout_backward(grad_x.view(), grad_x.view(), 0.25f, key, {});
  bool consistent = true;
  for (std::int64_t k = 0; k < 60 * 9; ++k) {
    const bool kept = y.data()[k] != 0.0f;
    const float expected = kept ? grad_y.data()[k] * (1.0f / 0.75f) : 0.0f;
    consistent = consistent && grad_x.data()[k] == expected;
  }
  CHECK(consistent);
}

TEST_CASE("dropout masks change with the seed, the epoch and the layer", "[kernels]") {
  RandomStream rng(66, 0);
  const Tensor x = nonzero_tensor(rng, 100, 8);
  const auto mask_of = [&](DropoutKey key) {
    Tensor y = test::poisoned(100, 8);
    dropout_forward(x.view(), y.view(), 0.5f, key, {});
    std::vector<bool> kept;
    for (const float v : y.to_vector()) kept.push_back(v != 0.0f);
    return kept;
  };
  const std::vector<bool> base = mask_of({1, 1, 1});
  CHECK(mask_of({1, 1, 1}) == base);
  CHECK(mask_of({2, 1, 1}) != base);
  CHECK(mask_of({1, 2, 1}) != base);
  CHECK(mask_of({1, 1, 2}) != base);
}

TEST_CASE("dropout with p = 0 is the identity and p outside 0 <= p < 1 is refused", "[kernels]") {
  RandomStream rng(67, 0);
  const Tensor x = test::random_tensor(rng, 10, 4);
  Tensor y = test::poisoned(10, 4);
  dropout_forward(x.view(), y.view(), 0.0f, {}, {});
  CHECK(test::identical(x.view(), y.view()));
  CHECK_THROWS_WITH(dropout_forward(x.view(), y.view(), 1.0f, {}, {}),
                    Catch::Contains("dropout_forward: p must be in [0, 1)"));
  CHECK_THROWS_AS(dropout_backward(x.view(), y.view(), -0.1f, {}, {}), InvalidArgument);
  const std::vector<std::int64_t> too_few{1, 2};
  CHECK_THROWS_WITH(dropout_forward(x.view(), y.view(), 0.5f, {}, test::index_view(too_few)),
                    Catch::Contains("one id per row (10), got 2"));
}
