// Tests of train/features/feature_source.*: block reads from a heap array, a borrowed array, a mapped .npy
// file and a reader callback; range checks; and the page release that keeps a streamed file's
// resident set bounded.
#include "train/features/feature_source.hpp"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "datasets/npy.hpp"
#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::train;
using kernels::TensorView;

namespace {

// Value (r, c) of the test features: distinct, non-zero, exact in float.
float value_at(std::int64_t r, std::int64_t c) { return static_cast<float>(r * 1000 + c) + 0.5f; }

Array<float> pattern(std::int64_t rows, std::int64_t cols) {
  Array<float> a = Array<float>::matrix(rows, cols);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) a[r * cols + c] = value_at(r, c);
  return a;
}

// Reads `block` into a buffer with a row stride wider than the block, poisoned with NaN, and
// checks every value against value_at and that the padding was not written.
bool reads_pattern(const FeatureSource& s, const FeatureBlock& block) {
  const std::int64_t stride = block.cols() + 3;
  std::vector<float> out(static_cast<std::size_t>(block.rows() * stride), -7.0f);
  s.read(block, TensorView{out.data(), block.rows(), block.cols(), stride, kernels::Device::cpu()});
  for (std::int64_t r = 0; r < block.rows(); ++r)
    for (std::int64_t c = 0; c < stride; ++c) {
      const float got = out[static_cast<std::size_t>(r * stride + c)];
      const float want = c < block.cols() ? value_at(block.row_begin + r, block.col_begin + c) : -7.0f;
      if (got != want) return false;
    }
  return true;
}

// This process's resident set in bytes (the second field of /proc/self/statm, in pages).
std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

TEST_CASE("FeatureSource::read copies blocks of rows and columns of an owned array", "[train]") {
  const FeatureSource s = FeatureSource::from_array(pattern(10, 6));
  CHECK(s.rows() == 10);
  CHECK(s.cols() == 6);
  CHECK(s.row_bytes() == 24);
  CHECK(s.bytes() == 240);
  CHECK_FALSE(s.is_mapped());
  CHECK(reads_pattern(s, {0, 10, 0, 6}));
  CHECK(reads_pattern(s, {3, 7, 2, 5}));
  CHECK(reads_pattern(s, {9, 10, 5, 6}));
  CHECK(reads_pattern(s, {4, 4, 0, 6}));
}

TEST_CASE("FeatureSource::borrow reads the caller's array in place", "[train]") {
  Array<float> a = pattern(5, 4);
  const FeatureSource s = FeatureSource::borrow(a);
  CHECK(reads_pattern(s, {0, 5, 0, 4}));
  // A change the caller makes afterwards is seen: the values were not copied.
  a[2 * 4 + 1] = -1.0f;
  std::vector<float> row(4);
  s.read_rows(2, 3, TensorView{row.data(), 1, 4, 4, kernels::Device::cpu()});
  CHECK(row == std::vector<float>{value_at(2, 0), -1.0f, value_at(2, 2), value_at(2, 3)});
}

TEST_CASE("FeatureSource::borrow of 16-bit features reads blocks widened from half the stored bytes", "[train]") {
  for (HalfFormat format : {HalfFormat::float16, HalfFormat::bfloat16}) {
    const Array<float> x = pattern(50, 9);
    const datasets::HalfFeatures h = datasets::narrow_features(x, format);
    const FeatureSource s = FeatureSource::borrow(h);
    CHECK(s.rows() == 50);
    CHECK(s.cols() == 9);
    CHECK(s.row_bytes() == 36);
    CHECK(s.stored_row_bytes() == 18);
    CHECK(s.stored_bytes() == 900);
    CHECK(s.host_row(0) == nullptr);  // not float32 in memory: a GPU pipeline reads it through read()
    CHECK(s.stored_dtype() == (format == HalfFormat::float16 ? datasets::FeatureDType::float16
                                                             : datasets::FeatureDType::bfloat16));
    const FeatureBlock block{7, 19, 2, 8};
    std::vector<float> out(static_cast<std::size_t>(12 * 10), -7.0f);
    s.read(block, TensorView{out.data(), 12, 6, 10, kernels::Device::cpu()});
    for (std::int64_t r = 0; r < 12; ++r)
      for (std::int64_t c = 0; c < 10; ++c) {
        const float want = c < 6 ? half_to_float(format, h.bits[(7 + r) * 9 + 2 + c]) : -7.0f;
        REQUIRE(out[static_cast<std::size_t>(r * 10 + c)] == want);
      }
  }
}

TEST_CASE("FeatureSource::open_npy maps a .npy file and reads what was written", "[train]") {
  test::ScratchDir dir;
  datasets::write_npy(dir / "x.npy", pattern(300, 7));
  const FeatureSource s = FeatureSource::open_npy(dir / "x.npy");
  CHECK(s.is_mapped());
  CHECK(s.rows() == 300);
  CHECK(s.cols() == 7);
  CHECK(reads_pattern(s, {0, 300, 0, 7}));
  // Hints change nothing that is read: released pages fault back in from the file.
  s.prefetch(100, 200);
  s.release(0, 150);
  s.release(150, 300);
  CHECK(reads_pattern(s, {17, 299, 1, 6}));
  CHECK_THROWS_AS(s.prefetch(0, 301), InvalidArgument);
  CHECK_THROWS_AS(s.release(-1, 3), InvalidArgument);
}

TEST_CASE("FeatureSource::open_npy refuses files that are not 2-D float32 arrays", "[train]") {
  test::ScratchDir dir;
  datasets::write_npy(dir / "vector.npy", Array<float>::from_vector({1.0f, 2.0f, 3.0f}));
  Array<double> doubles = Array<double>::matrix(2, 2);
  for (double& v : doubles) v = 1.0;
  datasets::write_npy(dir / "doubles.npy", doubles);
  CHECK_THROWS_WITH(FeatureSource::open_npy(dir / "vector.npy"), Catch::Contains("2-D float32"));
  CHECK_THROWS_WITH(FeatureSource::open_npy(dir / "doubles.npy"), Catch::Contains("float64"));
  CHECK_THROWS_AS(FeatureSource::open_npy(dir / "missing.npy"), IoError);
}

TEST_CASE("FeatureSource::read rejects blocks outside the features and mismatched buffers", "[train]") {
  const FeatureSource s = FeatureSource::from_array(pattern(4, 3));
  std::vector<float> out(12);
  const auto view = [&](std::int64_t rows, std::int64_t cols) {
    return TensorView{out.data(), rows, cols, cols, kernels::Device::cpu()};
  };
  CHECK_THROWS_WITH(s.read({2, 5, 0, 3}, view(3, 3)), Catch::Contains("[2, 5)") && Catch::Contains("4 rows"));
  CHECK_THROWS_WITH(s.read({0, 1, 1, 4}, view(1, 3)), Catch::Contains("3 columns"));
  CHECK_THROWS_WITH(s.read({0, 2, 0, 3}, view(2, 2)), Catch::Contains("2 x 3"));
  CHECK_THROWS_AS(s.read({3, 2, 0, 3}, view(0, 3)), InvalidArgument);
  CHECK_THROWS_AS(FeatureSource::from_array(Array<float>::from_vector({1.0f})), InvalidArgument);
}

TEST_CASE("FeatureSource::from_reader asks the reader for exactly the block", "[train]") {
  std::vector<FeatureBlock> asked;
  const FeatureSource s = FeatureSource::from_reader(50, 9, [&](const FeatureBlock& b, TensorView out) {
    asked.push_back(b);
    for (std::int64_t r = 0; r < b.rows(); ++r)
      for (std::int64_t c = 0; c < b.cols(); ++c) out.row(r)[c] = value_at(b.row_begin + r, b.col_begin + c);
  });
  CHECK_FALSE(s.is_mapped());
  CHECK(reads_pattern(s, {10, 30, 2, 8}));
  REQUIRE(asked.size() == 1);
  CHECK(asked[0].row_begin == 10);
  CHECK(asked[0].row_end == 30);
  CHECK(asked[0].col_begin == 2);
  CHECK(asked[0].col_end == 8);
  CHECK_THROWS_AS(FeatureSource::from_reader(1, 1, {}), InvalidArgument);
}

TEST_CASE("FeatureSource::release gives a mapped file's pages back, so streaming keeps the resident set small",
          "[train]") {
  // 16 MiB of features: reading them maps every page; releasing them must unmap them again.
  const std::int64_t rows = 16384, cols = 256;
  test::ScratchDir dir;
  datasets::write_npy(dir / "big.npy", pattern(rows, cols));
  const FeatureSource s = FeatureSource::open_npy(dir / "big.npy");
  std::vector<float> chunk(static_cast<std::size_t>(1024 * cols));
  const std::int64_t before = resident_bytes();
  for (std::int64_t r = 0; r < rows; r += 1024)
    s.read_rows(r, r + 1024, TensorView{chunk.data(), 1024, cols, cols, kernels::Device::cpu()});
  const std::int64_t after_reading = resident_bytes();
  for (std::int64_t r = 0; r < rows; r += 1024) s.release(r, r + 1024);
  const std::int64_t after_release = resident_bytes();
  CAPTURE(before, after_reading, after_release);
  CHECK(after_reading - before > (12 << 20));
  CHECK(after_reading - after_release > (12 << 20));
  CHECK(chunk.back() == value_at(rows - 1, cols - 1));
}

TEST_CASE("FeatureSource::copy_to widens all of it into a strided matrix and gives a mapped file's pages back",
          "[train]") {
  ThreadScope threads(2);
  for (HalfFormat format : {HalfFormat::float16, HalfFormat::bfloat16}) {
    Array<float> x = pattern(5000, 9);
    for (float& v : x) v *= 0.003f;  // in float16's range, not every value exact in 16 bits
    const datasets::HalfFeatures h = datasets::narrow_features(x, format);
    std::vector<float> out(static_cast<std::size_t>(5000 * 11), -7.0f);
    FeatureSource::borrow(h).copy_to(TensorView{out.data(), 5000, 9, 11, kernels::Device::cpu()});
    bool exact = true;
    for (std::int64_t r = 0; r < 5000; ++r)
      for (std::int64_t c = 0; c < 11; ++c) {
        const float want = c < 9 ? half_to_float(format, h.bits[r * 9 + c]) : -7.0f;
        exact = exact && out[static_cast<std::size_t>(r * 11 + c)] == want;
      }
    CHECK(exact);
    // Kept in 16 bits: bfloat16 as stored, float16 refused.
    kernels::Bf16Rows kept = kernels::Bf16Rows::empty(5000, 9, kernels::Device::cpu());
    if (format == HalfFormat::float16) {
      CHECK_THROWS_WITH(FeatureSource::borrow(h).copy_to(kept), Catch::Contains("these are f16"));
      continue;
    }
    FeatureSource::borrow(h).copy_to(kept);
    for (std::int64_t r = 0; r < 5000; ++r)
      exact = exact && std::equal(kept.view().row(r), kept.view().row(r) + 9, h.bits.data() + r * 9);
    CHECK(exact);
  }
  // 16 MiB mapped: every page is read, and released once its rows are copied.
  const std::int64_t rows = 16384, cols = 256;
  test::ScratchDir dir;
  datasets::write_npy(dir / "big.npy", pattern(rows, cols));
  const FeatureSource s = FeatureSource::open_npy(dir / "big.npy");
  std::vector<float> all(static_cast<std::size_t>(rows * cols));
  const std::int64_t before = resident_bytes();
  s.copy_to(TensorView{all.data(), rows, cols, cols, kernels::Device::cpu()});
  const std::int64_t after = resident_bytes();
  CAPTURE(before, after);
  CHECK(after - before < (20 << 20));  // the 16 MiB copy, and not the map's 16 MiB beside it
  CHECK(all[5] == value_at(0, 5));
  CHECK(all.back() == value_at(rows - 1, cols - 1));
  CHECK_THROWS_WITH(s.copy_to(TensorView{all.data(), rows, cols - 1, cols, kernels::Device::cpu()}),
                    Catch::Contains("the features are 16384 x 256, the destination 16384 x 255"));
}
