// Narrowing float32 features to 16 bits (checked for overflow) and widening them back.
#include "datasets/half_features.hpp"

#include <fmt/format.h>

#include <cmath>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::datasets {

const char* to_string(FeatureDType dtype) {
  switch (dtype) {
    case FeatureDType::float32:
      return "f32";
    case FeatureDType::float16:
      return "f16";
    case FeatureDType::bfloat16:
      return "bf16";
  }
  return "?";
}

FeatureDType feature_dtype_from_string(const std::string& name) {
  for (FeatureDType d : {FeatureDType::float32, FeatureDType::float16, FeatureDType::bfloat16})
    if (name == to_string(d)) return d;
  throw InvalidArgument("feature dtype '" + name + "' is not one of f32, f16, bf16");
}

void HalfFeatures::widen(std::int64_t row_begin, std::int64_t row_end, std::int64_t col_begin, std::int64_t col_end,
                         float* out, std::int64_t out_stride) const {
  HALO_EXPECTS(0 <= row_begin && row_begin <= row_end && row_end <= rows() && 0 <= col_begin && col_begin <= col_end &&
                   col_end <= cols(),
               fmt::format("HalfFeatures::widen: rows [{}, {}) and columns [{}, {}) are not within {} x {}", row_begin,
                           row_end, col_begin, col_end, rows(), cols()));
  for (std::int64_t r = row_begin; r < row_end; ++r)
    widen_halves(format, bits.data() + r * cols() + col_begin, out + (r - row_begin) * out_stride, col_end - col_begin);
}

HalfFeatures narrow_features(const Array<float>& features, HalfFormat format) {
  HalfFeatures h{format, Array<std::uint16_t>::matrix(features.rows(), features.cols())};
  const float* in = features.data();
  std::uint16_t* out = h.bits.data();
  const std::int64_t n = features.size();
  parallel_for_ranges(0, n, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) out[i] = float_to_half(format, in[i]);
  });
  const std::int64_t bad = parallel_find_first(
      0, n, [&](std::int64_t i) { return std::isfinite(in[i]) && !half_is_finite(format, out[i]); });
  if (bad < n)
    throw InvalidArgument(fmt::format(
        "feature at row {}, column {} is {}, beyond the range of {} (largest {}); store "
        "these features as {}",
        bad / features.cols(), bad % features.cols(), in[bad], format == HalfFormat::float16 ? "float16" : "bfloat16",
        format == HalfFormat::float16 ? "65504" : "3.39e38", format == HalfFormat::float16 ? "bf16 or f32" : "f32"));
  return h;
}

Array<float> widen_features(const HalfFeatures& features) {
  Array<float> x = Array<float>::matrix(features.rows(), features.cols());
  float* out = x.data();
  parallel_for_ranges(
      0, features.rows(),
      [&](std::int64_t begin, std::int64_t end) {
        features.widen(begin, end, 0, features.cols(), out + begin * features.cols(), features.cols());
      },
      256);
  return x;
}

}  // namespace halo::datasets
