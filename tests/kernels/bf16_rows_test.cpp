// Tests of kernels/bf16_rows.*: Bf16Rows::narrow rounds every value as graph/base/half.hpp's
// float_to_bfloat16 (ties, subnormals, overflow, NaN, odd widths, strided inputs), widen gives the
// rounded values back exactly into a window over NaN without touching its padding, ReLU's backward
// from the bfloat16 output is bitwise relu_backward from the widened one, and bad operands are
// refused.
#include "kernels/bf16_rows.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/half.hpp"
#include "graph/base/parallel.hpp"
#include "graph/base/random.hpp"
#include "kernels/elementwise.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

float from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Random values with the hard cases mixed in: ties to even both ways, subnormals, values that
// round past the largest bfloat16, infinities, NaN, signed zeros.
Tensor awkward_values(std::uint64_t seed, std::int64_t rows, std::int64_t cols) {
  RandomStream rng(seed, 0);
  Tensor t = test::random_tensor(rng, rows, cols, -3.0, 3.0);
  const std::vector<float> special = {from_bits(0x3f808000u),  // 1 + 2^-8: a tie, rounds down to even
                                      from_bits(0x3f818000u),  // a tie that rounds up to even
                                      from_bits(0x00000001u),  // the smallest subnormal float
                                      from_bits(0x80400000u),  // a negative subnormal
                                      from_bits(0x7f7fffffu),  // rounds past the largest bfloat16
                                      std::numeric_limits<float>::infinity(),
                                      -std::numeric_limits<float>::infinity(),
                                      std::numeric_limits<float>::quiet_NaN(),
                                      0.0f,
                                      -0.0f};
  for (std::size_t k = 0; k < special.size() && static_cast<std::int64_t>(k) < t.numel(); ++k)
    t.data()[(k * 7919) % static_cast<std::size_t>(t.numel())] = special[k];
  return t;
}

// Every value of a bfloat16 window, row by row.
std::vector<std::uint16_t> bits_of(Bf16View v) {
  std::vector<std::uint16_t> out;
  for (std::int64_t i = 0; i < v.rows; ++i)
    for (std::int64_t j = 0; j < v.cols; ++j) out.push_back(v.row(i)[j]);
  return out;
}

}  // namespace

TEST_CASE("Bf16Rows::narrow rounds every value to the nearest bfloat16 as float_to_bfloat16 does", "[kernels]") {
  const std::int64_t cols = GENERATE(as<std::int64_t>{}, 1, 7, 64, 131);
  const int threads = GENERATE(1, 3);
  CAPTURE(cols, threads);
  ThreadScope scope(threads);
  const Tensor x = awkward_values(static_cast<std::uint64_t>(cols), 57, cols);
  const test::Strided strided = test::strided_copy(x, 5);
  for (const ConstTensorView in : {ConstTensorView(x.view()), ConstTensorView(strided.view)}) {
    const Bf16Rows h = Bf16Rows::narrow(in);
    REQUIRE(h.rows() == 57);
    REQUIRE(h.cols() == cols);
    CHECK(h.view().stride == cols + cols % 2);
    std::vector<std::uint16_t> want;
    for (std::int64_t i = 0; i < x.rows(); ++i)
      for (std::int64_t j = 0; j < cols; ++j) want.push_back(float_to_bfloat16(x.data()[i * cols + j]));
    CHECK(bits_of(h.view()) == want);
  }
  CHECK(Bf16Rows::bytes_for(57, cols) == 57 * ((cols + 1) / 2) * 4);
}

TEST_CASE("widen gives the rounded values back exactly and leaves a window's padding alone", "[kernels]") {
  const std::int64_t cols = GENERATE(as<std::int64_t>{}, 1, 33, 130);
  CAPTURE(cols);
  const Tensor x = awkward_values(11 + static_cast<std::uint64_t>(cols), 41, cols);
  const Bf16Rows h = Bf16Rows::narrow(x.view());
  test::Strided out(41, cols, 3, std::numeric_limits<float>::quiet_NaN());
  fill(out.view, std::numeric_limits<float>::quiet_NaN());
  widen(h.view(), out.view);
  for (std::int64_t i = 0; i < 41; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const float want = bfloat16_to_float(float_to_bfloat16(x.data()[i * cols + j]));
      const float got = out.view.row(i)[j];
      CHECK((got == want || (std::isnan(got) && std::isnan(want))));
      if (std::isfinite(want)) CHECK(std::signbit(got) == std::signbit(want));
    }
  CHECK(out.padding_intact(std::numeric_limits<float>::quiet_NaN()));
  // Rows of the middle, as InputMatrix widens a chunk.
  Tensor part = test::poisoned(10, cols);
  widen(h.view().slice_rows(20, 30), part.view());
  CHECK(test::identical(part.view(), ConstTensorView(out.view).slice_rows(20, 30)));
}

TEST_CASE("Bf16Rows::copy_bits keeps stored bfloat16 values as they are, row block by row block", "[kernels]") {
  const std::int64_t cols = GENERATE(as<std::int64_t>{}, 1, 33, 130);
  CAPTURE(cols);
  const Tensor x = awkward_values(29 + static_cast<std::uint64_t>(cols), 41, cols);
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(41 * cols));
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = float_to_bfloat16(x.data()[i]);
  Bf16Rows h = Bf16Rows::empty(41, cols, Device::cpu());
  CHECK(h.rows() == 41);
  CHECK(h.cols() == cols);
  h.copy_bits(0, bits.data(), 17);  // two blocks, as a caller releasing a file's pages writes them
  h.copy_bits(17, bits.data() + 17 * cols, 24);
  // The same values as narrowing the float32 ones gives.
  const Bf16Rows narrowed = Bf16Rows::narrow(x.view());
  for (std::int64_t i = 0; i < 41; ++i)
    CHECK(std::equal(h.view().row(i), h.view().row(i) + cols, narrowed.view().row(i)));
  CHECK_THROWS_WITH(h.copy_bits(30, bits.data(), 12), Catch::Contains("rows [30, 42) outside the 41 rows"));
}

TEST_CASE("relu_backward from a bfloat16 output is bitwise relu_backward from the widened output", "[kernels]") {
  const float scale = GENERATE(1.0f, 2.0f, 1.0f / 0.7f);
  CAPTURE(scale);
  RandomStream rng(5, 0);
  Tensor y = test::random_tensor(rng, 90, 37);
  relu_forward(y.view(), y.view());
  y.data()[3] = from_bits(0x00000001u);  // a positive subnormal float, zero in bfloat16
  const Bf16Rows h = Bf16Rows::narrow(y.view());
  Tensor wide = Tensor::empty(90, 37);
  widen(h.view(), wide.view());
  const Tensor g = test::random_tensor(rng, 90, 37);
  Tensor want = test::poisoned(90, 37);
  relu_backward(wide.view(), g.view(), want.view(), scale);
  Tensor got = test::poisoned(90, 37);
  relu_backward(h.view(), g.view(), got.view(), scale);
  CHECK(test::identical(got.view(), want.view()));
  Tensor in_place = g.clone();
  relu_backward(h.view(), in_place.view(), in_place.view(), scale);
  CHECK(test::identical(in_place.view(), want.view()));
  CHECK(got.data()[3] == 0.0f);
}

TEST_CASE("elu_backward from a bfloat16 output is bitwise elu_backward from the widened output", "[kernels]") {
  RandomStream rng(6, 0);
  Tensor y = test::random_tensor(rng, 90, 37, -4.0, 4.0);
  elu_forward(y.view(), y.view());  // outputs in (-1, 4): both branches of the derivative
  const Bf16Rows h = Bf16Rows::narrow(y.view());
  Tensor wide = Tensor::empty(90, 37);
  widen(h.view(), wide.view());
  const Tensor g = test::random_tensor(rng, 90, 37);
  Tensor want = test::poisoned(90, 37);
  elu_backward(wide.view(), g.view(), want.view());
  Tensor got = test::poisoned(90, 37);
  elu_backward(h.view(), g.view(), got.view());
  CHECK(test::identical(got.view(), want.view()));
  Tensor in_place = g.clone();
  elu_backward(h.view(), in_place.view(), in_place.view());
  CHECK(test::identical(in_place.view(), want.view()));
  // Against the derivative of the float32 output: the rounded y + 1, within 2^-8 of the factor.
  Tensor exact = test::poisoned(90, 37);
  elu_backward(y.view(), g.view(), exact.view());
  for (std::int64_t k = 0; k < 90 * 37; ++k)
    CHECK(std::abs(got.data()[k] - exact.data()[k]) <= std::ldexp(std::abs(g.data()[k]), -8));
}

TEST_CASE("The bfloat16 kernels refuse mismatched shapes and overlapping operands", "[kernels]") {
  const Tensor x = test::random_tensor(1, 8, 6);
  const Bf16Rows h = Bf16Rows::narrow(x.view());
  Tensor small = Tensor::empty(8, 5);
  CHECK_THROWS_AS(widen(h.view(), small.view()), InvalidArgument);
  Tensor g = test::random_tensor(2, 8, 6);
  CHECK_THROWS_AS(relu_backward(h.view(), g.view(), small.view()), InvalidArgument);
  CHECK_THROWS_AS(elu_backward(h.view(), small.view(), g.view()), InvalidArgument);
  // A float window over the bfloat16 values themselves (4 rows of 6 floats: the first 8 rows'
  // storage).
  auto* storage = const_cast<float*>(reinterpret_cast<const float*>(h.view().data));
  CHECK_THROWS_WITH(widen(h.view().slice_rows(0, 4), TensorView{storage, 4, 6, 6, Device::cpu()}),
                    Catch::Contains("overlap"));
}
