// Tests of train/layers/remembered_dropout.*: every pass, however its chunks fall, writes the values
// of kernels::dropout_forward on the whole matrix, the first pass over a row drawing its mask and
// the later ones selecting by the bits kept from it.
#include "train/layers/remembered_dropout.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "kernels/dropout.hpp"
#include "tests/support/thread_count.hpp"
#include "tests/train/gradient_check.hpp"

using namespace halo;
using namespace halo::train;
using kernels::Tensor;

namespace {

// rows x cols values in [-1, 1), none of them zero (a kept zero comes out +0, whatever its sign).
Tensor nonzero_values(std::uint64_t seed, std::int64_t rows, std::int64_t cols) {
  RandomStream rng(seed, 9);
  std::vector<float> v(static_cast<std::size_t>(rows * cols));
  for (float& x : v) {
    x = static_cast<float>(rng.uniform()) * 2.0f - 1.0f;
    if (x == 0.0f) x = 0.5f;
  }
  return Tensor::from_vector(rows, cols, v);
}

// A pass of the reader over x into a chunk poisoned with NaN, in chunks of `chunk` rows starting
// at row `first` (then wrapping round to row 0): what it wrote, row for row.
std::vector<float> pass(const ChunkReader& reader, const Tensor& x, std::int64_t chunk, std::int64_t first) {
  Tensor y = Tensor::full(x.rows(), x.cols(), std::numeric_limits<float>::quiet_NaN());
  const auto run = [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; r += chunk) {
      const std::int64_t e = std::min(end, r + chunk);
      reader(x.view().slice_rows(r, e), y.view().slice_rows(r, e), r);
    }
  };
  run(first, x.rows());
  run(0, first);
  return y.to_vector();
}

}  // namespace

TEST_CASE("remembered_dropout writes dropout_forward's values on every pass, however the chunks fall", "[train]") {
  // 77 columns: rows of 10 bytes of bits, the last byte 5 values.
  const std::int64_t rows = 301, cols = 77;
  const std::uint64_t seed = test::case_seed(41);
  CAPTURE(seed);
  const Tensor x = nonzero_values(seed, rows, cols);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) ids[static_cast<std::size_t>(i)] = 1000 + 7 * i;  // global ids
  const kernels::DropoutKey key{seed, 3, 2};
  const float p = 0.4f;
  Tensor want = Tensor::empty(rows, cols);
  kernels::dropout_forward(x.view(), want.view(), p, key, {ids.data(), rows});
  const std::vector<float> expected = want.to_vector();

  const int threads = GENERATE(1, 2);
  CAPTURE(threads);
  test::with_threads(threads, [&] {
    const ChunkReader reader = remembered_dropout(p, key, {ids.data(), rows}, rows, cols);
    // The first pass draws rows [120, 301) in chunks of 64; the second draws [0, 120) in chunks
    // of 50 and selects the rest in chunks of 50 (runs of drawn and undrawn rows in one chunk);
    // the third selects everything in one chunk, the fourth in chunks of 7 from row 200.
    Tensor drawn = Tensor::full(rows, cols, std::numeric_limits<float>::quiet_NaN());
    for (std::int64_t r = 120; r < rows; r += 64) {
      const std::int64_t e = std::min(rows, r + 64);
      reader(x.view().slice_rows(r, e), drawn.view().slice_rows(r, e), r);
    }
    const std::vector<float> first = drawn.to_vector();
    CHECK(std::vector<float>(first.begin() + 120 * cols, first.end()) ==
          std::vector<float>(expected.begin() + 120 * cols, expected.end()));
    CHECK(pass(reader, x, 50, 0) == expected);
    CHECK(pass(reader, x, rows, 0) == expected);
    CHECK(pass(reader, x, 7, 200) == expected);
  });

  // Without ids, row r is keyed on r.
  Tensor by_row = Tensor::empty(rows, cols);
  kernels::dropout_forward(x.view(), by_row.view(), p, key, {});
  CHECK(pass(remembered_dropout(p, key, {}, rows, cols), x, 64, 0) == by_row.to_vector());

  // Its bits are a host tensor's storage, from the first read until the reader goes: the memory
  // plan's tests against the tensor counters see them.
  const kernels::Device cpu = kernels::Device::cpu();
  Tensor y = x.clone();
  const std::int64_t before = kernels::tensor_bytes_in_use(cpu);
  {
    const ChunkReader kept = remembered_dropout(p, key, {ids.data(), rows}, rows, cols);
    CHECK(kernels::tensor_bytes_in_use(cpu) == before);
    kept(x.view().slice_rows(0, 10), y.view().slice_rows(0, 10), 0);
    CHECK(kernels::tensor_bytes_in_use(cpu) == before + remembered_dropout_bytes(rows, cols, cpu));
  }
  CHECK(kernels::tensor_bytes_in_use(cpu) == before);

  // Rows outside its matrix, p outside (0, 1) and ids that do not cover the rows are refused.
  const ChunkReader reader = remembered_dropout(p, key, {ids.data(), rows}, rows, cols);
  CHECK_THROWS_AS(reader(x.view().slice_rows(0, 10), y.view().slice_rows(0, 10), rows - 5), InvalidArgument);
  CHECK_THROWS_AS(remembered_dropout(0.0f, key, {ids.data(), rows}, rows, cols), InvalidArgument);
  CHECK_THROWS_AS(remembered_dropout(p, key, {ids.data(), rows - 1}, rows, cols), InvalidArgument);
  CHECK_NOTHROW(remembered_dropout(p, key, {ids.data(), rows}, rows - 1, cols));
  CHECK(remembered_dropout_bytes(rows, cols, cpu) == rows * 12);  // a flag and 10 bytes of bits, padded to 12
  CHECK(remembered_dropout_bytes(rows, cols, kernels::Device::cuda()) == 0);  // drawn on every read there
}
