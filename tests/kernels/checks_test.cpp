// Tests of kernels/detail/checks.hpp's aliasing rule: views of one tensor compared element by
// element where their strides agree (side-by-side column windows are disjoint, windows that share
// a cell or wrap into the next row are not), by memory span otherwise; against a brute-force
// comparison of the elements' addresses.
#include "kernels/detail/checks.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <set>

#include "kernels/tensor.hpp"

using namespace halo::kernels;

namespace {

bool share_an_element(const ConstTensorView& a, const ConstTensorView& b) {
  std::set<const float*> cells;
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t c = 0; c < a.cols; ++c) cells.insert(a.row(r) + c);
  for (std::int64_t r = 0; r < b.rows; ++r)
    for (std::int64_t c = 0; c < b.cols; ++c)
      if (cells.count(b.row(r) + c) != 0) return true;
  return false;
}

}  // namespace

TEST_CASE("overlaps is exact for windows of one stride and agrees with their elements", "[kernels]") {
  const Tensor t = Tensor::zeros(6, 8);
  const ConstTensorView v = t.view();
  // Every window of rows [r0, r0 + h) and columns [c0, c0 + w) against every other.
  std::int64_t compared = 0;
  for (std::int64_t r0 = 0; r0 < 6; r0 += 2)
    for (std::int64_t c0 = 0; c0 < 8; c0 += 3)
      for (std::int64_t r1 = 0; r1 < 6; r1 += 3)
        for (std::int64_t c1 = 0; c1 < 8; c1 += 2) {
          const ConstTensorView a =
              v.slice_rows(r0, std::min<std::int64_t>(r0 + 3, 6)).slice_cols(c0, std::min<std::int64_t>(c0 + 3, 8));
          const ConstTensorView b =
              v.slice_rows(r1, std::min<std::int64_t>(r1 + 2, 6)).slice_cols(c1, std::min<std::int64_t>(c1 + 4, 8));
          CAPTURE(r0, c0, r1, c1);
          CHECK(detail::overlaps(a, b) == share_an_element(a, b));
          CHECK(detail::overlaps(b, a) == share_an_element(a, b));
          ++compared;
        }
  CHECK(compared == 3 * 3 * 2 * 4);
  // Side-by-side head columns: disjoint.
  CHECK_FALSE(detail::overlaps(v.slice_cols(0, 4), v.slice_cols(4, 8)));
  // A window whose rows run past the stride's row end into the next row (a wider view over the
  // same memory with another stride): compared by span.
  const ConstTensorView flat{t.view().data, 3, 16, 16, Device::cpu()};
  CHECK(detail::overlaps(flat, v.slice_cols(4, 8)));
  // Empty windows never overlap.
  CHECK_FALSE(detail::overlaps(v.slice_cols(2, 2), v));
}
