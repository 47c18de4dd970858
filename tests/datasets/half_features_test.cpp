// Tests of 16-bit features: narrowing and widening against the scalar conversions, numpy's float16
// bytes read as numpy wrote them, dataset directories written as f16 / bf16 and read back kept or
// widened (homogeneous and heterogeneous), and the errors for values out of range, non-finite
// values on disk and a dtype that disagrees with dataset.json.
#include "datasets/half_features.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

#include "datasets/array_checks.hpp"
#include "datasets/dataset_dir.hpp"
#include "datasets/npy.hpp"
#include "graph/base/error.hpp"
#include "tests/datasets/tiny_datasets.hpp"
#include "tests/support/corrupt_files.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::datasets;

namespace {

// rows x cols features spanning float16's range: subnormals, values that round, large ones.
Array<float> spread_features(std::int64_t rows, std::int64_t cols) {
  Array<float> x = Array<float>::matrix(rows, cols);
  for (std::int64_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>((i % 2 == 0 ? 1 : -1) *
                              std::ldexp(1.0 + 0.3183 * static_cast<double>(i % 17), static_cast<int>(i % 38) - 24));
  return x;
}

std::string text_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("narrow_features rounds every value as the scalar conversion does and widen_features inverts it", "[unit]") {
  const Array<float> x = spread_features(37, 11);
  for (HalfFormat format : {HalfFormat::float16, HalfFormat::bfloat16}) {
    const HalfFeatures h = narrow_features(x, format);
    REQUIRE(h.rows() == 37);
    REQUIRE(h.cols() == 11);
    const Array<float> back = widen_features(h);
    for (std::int64_t i = 0; i < x.size(); ++i) {
      INFO(i);
      REQUIRE(h.bits[i] == float_to_half(format, x[i]));
      REQUIRE(back[i] == half_to_float(format, h.bits[i]));
      // Within half a unit in the last place: 2^-11 relative for float16 (normal values), 2^-8 for bfloat16.
      const double tolerance =
          format == HalfFormat::float16
              ? std::max(std::ldexp(std::fabs(static_cast<double>(x[i])), -11), std::ldexp(1.0, -25))
              : std::ldexp(std::fabs(static_cast<double>(x[i])), -8);
      REQUIRE(std::fabs(back[i] - x[i]) <= tolerance);
    }
    std::vector<float> block(3 * 4, -9.0f);
    h.widen(5, 8, 2, 6, block.data(), 4);
    for (std::int64_t r = 0; r < 3; ++r)
      for (std::int64_t c = 0; c < 4; ++c) REQUIRE(block[r * 4 + c] == back[(5 + r) * 11 + 2 + c]);
  }
}

TEST_CASE("narrow_features refuses a value float16 cannot hold, naming its row and column", "[unit]") {
  Array<float> x = spread_features(4, 3);
  x[7] = 70000.0f;
  CHECK_THROWS_WITH(narrow_features(x, HalfFormat::float16),
                    Catch::StartsWith("feature at row 2, column 1 is 70000") &&
                        Catch::Contains("store these features as bf16 or f32"));
  CHECK_NOTHROW(narrow_features(x, HalfFormat::bfloat16));
  x[7] = 3.4e38f;
  CHECK_THROWS_WITH(narrow_features(x, HalfFormat::bfloat16), Catch::Contains("beyond the range of bfloat16"));
  CHECK(to_string(feature_dtype_from_string("bf16")) == std::string("bf16"));
  CHECK_THROWS_WITH(feature_dtype_from_string("f64"), Catch::Contains("not one of f32, f16, bf16"));
}

TEST_CASE("read_npy_halves reads numpy's float16 bytes as Python rounds them", "[unit]") {
  // tests/data/npy/f2_2x3.npy: struct.pack("<6e", 0.5, -1/3, 65504, 6e-8, 0.1, -0.0) behind numpy's header.
  const Array<std::uint16_t> h = read_npy_halves(test::test_data_dir() + "/npy/f2_2x3.npy", HalfFormat::float16);
  REQUIRE(h.ndim() == 2);
  REQUIRE(h.rows() == 2);
  REQUIRE(h.cols() == 3);
  const double values[] = {0.5, -1.0 / 3.0, 65504.0, 6e-8, 0.1, -0.0};
  for (int i = 0; i < 6; ++i) CHECK(h[i] == float_to_float16(static_cast<float>(values[i])));
  CHECK(h[3] == 0x0001);  // the smallest subnormal, 2^-24
  CHECK_THROWS_WITH(read_npy_halves(test::test_data_dir() + "/npy/f2_2x3.npy", HalfFormat::bfloat16),
                    Catch::Contains("dtype is <f2 (float16), expected <u2 (uint16)"));
  CHECK_THROWS_WITH(read_npy<float>(test::test_data_dir() + "/npy/f2_2x3.npy"),
                    Catch::Contains("dtype is <f2 (float16), expected <f4 (float32)"));
}

TEST_CASE("a dataset directory stores f16 or bf16 features and reads them kept or widened", "[unit]") {
  test::ScratchDir dir;
  Dataset ds = test::tiny_homogeneous();
  ds.node_types[0].features = spread_features(4, 3);
  const Array<float> original = ds.node_types[0].features.clone();
  for (FeatureDType dtype : {FeatureDType::float16, FeatureDType::bfloat16}) {
    const HalfFormat format = dtype == FeatureDType::float16 ? HalfFormat::float16 : HalfFormat::bfloat16;
    const std::string path = dir / to_string(dtype);
    write_dataset_dir(ds, path, false, FeatureValues::check, dtype);
    // numpy's own header: <f2 for float16, <u2 (the bits) for bfloat16; dataset.json names the dtype.
    CHECK(read_npy_header(path + "/node_feat.npy").dtype ==
          (format == HalfFormat::float16 ? DType::float16 : DType::uint16));
    CHECK(read_dataset_dir_info(path).find_file("node_feat.npy")->dtype == half_dtype(format));
    CHECK(text_of(path + "/dataset.json").find(format == HalfFormat::float16 ? "\"float16\"" : "\"bfloat16\"") !=
          std::string::npos);

    DatasetDirOptions keep;
    keep.keep_half_features = true;
    const Dataset kept = read_dataset_dir(path, keep);
    const NodeType& k = kept.node_types[0];
    REQUIRE(k.features.empty());
    REQUIRE(k.half_features.format == format);
    REQUIRE(k.half_features.bits.is_mapped());
    REQUIRE(k.feature_dim() == 3);
    const Dataset widened = read_dataset_dir(path);
    const NodeType& w = widened.node_types[0];
    REQUIRE(w.half_features.empty());
    REQUIRE(w.features.cols() == 3);
    for (std::int64_t i = 0; i < 12; ++i) {
      REQUIRE(k.half_features.bits[i] == float_to_half(format, original[i]));
      REQUIRE(w.features[i] == half_to_float(format, k.half_features.bits[i]));
    }
    // Kept features are written back as they are, whatever the requested dtype.
    write_dataset_dir(kept, path + "-again", false, FeatureValues::check, FeatureDType::float32);
    CHECK(text_of(path + "-again/node_feat.npy") == text_of(path + "/node_feat.npy"));
  }
}

TEST_CASE("a heterogeneous dataset stores every featured type in 16 bits", "[unit]") {
  test::ScratchDir dir;
  const Dataset ds = test::tiny_hetero();
  write_dataset_dir(ds, dir / "h", false, FeatureValues::check, FeatureDType::bfloat16);
  const Dataset back = read_dataset_dir(dir / "h");
  for (std::size_t t = 0; t < ds.node_types.size(); ++t) {
    const Array<float>& a = ds.node_types[t].features;
    const Array<float>& b = back.node_types[t].features;
    REQUIRE(a.size() == b.size());
    for (std::int64_t i = 0; i < a.size(); ++i) REQUIRE(b[i] == bfloat16_to_float(float_to_bfloat16(a[i])));
  }
}

TEST_CASE("a non-finite 16-bit feature or a dtype dataset.json does not list is refused on open",
          "[dataset_dir][faults]") {
  test::ScratchDir dir;
  const std::string path = dir / "ds";
  write_dataset_dir(test::tiny_homogeneous(), path, false, FeatureValues::check, FeatureDType::float16);
  test::poke_listed<std::uint16_t>(path, "dataset.json", "node_feat.npy", 7, std::uint16_t{0x7c00});  // +inf
  CHECK_THROWS_WITH(read_dataset_dir(path),
                    path + "/node_feat.npy: value at row 2, column 1 is inf, not a finite number");
  DatasetDirOptions keep;
  keep.keep_half_features = true;
  CHECK_THROWS_WITH(read_dataset_dir(path, keep), Catch::Contains("row 2, column 1"));

  // A bfloat16 file whose dataset.json entry says float16: the header (<u2) disagrees.
  const std::string other = dir / "bf";
  write_dataset_dir(test::tiny_homogeneous(), other, false, FeatureValues::check, FeatureDType::bfloat16);
  std::string json = text_of(other + "/dataset.json");
  json.replace(json.find("\"bfloat16\""), 10, "\"float16\"");
  std::ofstream(other + "/dataset.json", std::ios::binary | std::ios::trunc) << json;
  CHECK_THROWS_WITH(read_dataset_dir(other),
                    Catch::Contains(other + "/node_feat.npy: dtype is <u2 (uint16), expected <f2"));
}
