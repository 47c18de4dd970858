// HalfFeatures: a feature matrix stored in 16 bits (float16 or bfloat16), as `halo-convert
// --feature-dtype f16|bf16` writes node_feat.npy: half the bytes on disk, in the page cache and
// through the feature streaming pipeline, widened to float32 where the values are used. The
// narrowing that makes them and the widening that reads them.
#pragma once

#include <cstdint>
#include <string>

#include "graph/base/array.hpp"
#include "graph/base/half.hpp"

namespace halo::datasets {

// The storage of the features of one vertex type; float32 features need none of this.
enum class FeatureDType { float32, float16, bfloat16 };

// "f32" / "f16" / "bf16" (halo-convert's --feature-dtype) and back; throws InvalidArgument naming
// the accepted names.
const char* to_string(FeatureDType dtype);
FeatureDType feature_dtype_from_string(const std::string& name);

struct HalfFeatures {
  HalfFormat format = HalfFormat::float16;
  Array<std::uint16_t> bits;  // rows x cols, heap or a read-only file map; empty: none

  bool empty() const { return bits.empty(); }
  std::int64_t rows() const { return bits.rows(); }
  std::int64_t cols() const { return bits.cols(); }
  // Widens rows [row_begin, row_end), columns [col_begin, col_end) into `out` (row stride
  // out_stride floats). One thread; O(values).
  void widen(std::int64_t row_begin, std::int64_t row_end, std::int64_t col_begin, std::int64_t col_end, float* out,
             std::int64_t out_stride) const;
};

// The float32 features narrowed to `format`, rounding to nearest (ties to even). Throws
// InvalidArgument naming the row, column and value when a finite value would become infinite
// (beyond float16's ±65504, or past bfloat16's largest value). Parallel; O(values).
HalfFeatures narrow_features(const Array<float>& features, HalfFormat format);

// A float32 heap copy of the features. Parallel; O(values).
Array<float> widen_features(const HalfFeatures& features);

}  // namespace halo::datasets
