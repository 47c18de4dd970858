// Tests of train/dist/detail/row_split.hpp: a row goes whole to the interior or the boundary CSR,
// and the interior product followed by the accumulated boundary product is the single product
// bit for bit (random parts with empty rows and rows that read only halo columns, both index
// types, weighted or not, rows longer than the SpMM's 8-neighbour passes); a row range of a CSR
// multiplies as those rows of the whole.
#include "train/dist/detail/row_split.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "kernels/spmm.hpp"
#include "kernels/tensor.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/tensor_compare.hpp"

using namespace halo;
using halo::train::dist::detail::row_range;
using halo::train::dist::detail::RowSplit;
using halo::train::dist::detail::split_rows_by_column;
using kernels::Accumulate;
using kernels::Tensor;
using test::random_tensor;
using test::rows_of;
using test::same_bits;

namespace {

// A part-like operator: `owned` rows over `owned + halo` columns. A row is empty (1 in 8), reads
// only halo columns (1 in 8), only owned ones (3 in 8) or both; degrees up to 40, columns in
// random order, repeats allowed.
template <class I>
graph::CsrGraph random_part(std::uint64_t seed, std::int64_t owned, std::int64_t halo, bool weighted) {
  RandomStream rng(seed, 0);
  std::vector<std::int64_t> indptr{0};
  std::vector<I> indices;
  std::vector<float> weights;
  for (std::int64_t r = 0; r < owned; ++r) {
    const auto kind = static_cast<int>(rng.uniform() * 8.0);
    const std::int64_t degree = kind == 0 ? 0 : 1 + static_cast<std::int64_t>(rng.uniform() * 40.0);
    for (std::int64_t k = 0; k < degree; ++k) {
      const bool to_halo = kind == 1 || (kind >= 5 && rng.uniform() < 0.5);
      const std::int64_t c = to_halo ? owned + static_cast<std::int64_t>(rng.uniform() * static_cast<double>(halo))
                                     : static_cast<std::int64_t>(rng.uniform() * static_cast<double>(owned));
      indices.push_back(static_cast<I>(c));
      weights.push_back(static_cast<float>(0.1 + rng.uniform()));
    }
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  return graph::CsrGraph(owned, owned + halo, Array<std::int64_t>::from_vector(indptr), Array<I>::from_vector(indices),
                         weighted ? Array<float>::from_vector(weights) : Array<float>());
}

}  // namespace

TEST_CASE("split_rows_by_column sends each row whole, in order, to the interior or the boundary CSR", "[train]") {
  // Four owned vertices 0-3 and two halo columns 4, 5 (first_halo = 4):
  //   row 0: 3, 1      owned only   -> interior
  //   row 1: (none)    empty        -> interior
  //   row 2: 0, 4, 2   one halo     -> boundary
  //   row 3: 5, 4      halo only    -> boundary
  const graph::CsrGraph a(4, 6, Array<std::int64_t>::from_vector({0, 2, 2, 5, 7}),
                          Array<std::int32_t>::from_vector({3, 1, 0, 4, 2, 5, 4}),
                          Array<float>::from_vector({1, 2, 3, 4, 5, 6, 7}));
  const RowSplit split = split_rows_by_column(a, 4);
  CHECK(split.interior.num_rows() == 4);
  CHECK(split.interior.num_cols() == 6);
  CHECK(split.interior.indptr().to_vector() == std::vector<std::int64_t>{0, 2, 2, 2, 2});
  CHECK(split.interior.indices<std::int32_t>().to_vector() == std::vector<std::int32_t>{3, 1});
  CHECK(split.interior.weights().to_vector() == std::vector<float>{1, 2});
  CHECK(split.boundary.num_rows() == 4);
  CHECK(split.boundary.num_cols() == 6);
  CHECK(split.boundary.indptr().to_vector() == std::vector<std::int64_t>{0, 0, 0, 3, 5});
  CHECK(split.boundary.indices<std::int32_t>().to_vector() == std::vector<std::int32_t>{0, 4, 2, 5, 4});
  CHECK(split.boundary.weights().to_vector() == std::vector<float>{3, 4, 5, 6, 7});

  // Without halo columns (first_halo = num_cols) every row is interior; with first_halo = 0 every
  // non-empty row is boundary.
  CHECK(split_rows_by_column(a, 6).boundary.num_edges() == 0);
  CHECK(split_rows_by_column(a, 0).interior.num_edges() == 0);
  CHECK_THROWS_AS(split_rows_by_column(a, 7), InvalidArgument);
  CHECK_THROWS_WITH(split_rows_by_column(a, -1), Catch::Contains("[0, 6]") && Catch::Contains("-1"));
}

TEST_CASE("The interior product, then the boundary product added onto it, is the single product bit for bit",
          "[train]") {
  const bool weighted = GENERATE(true, false);
  const bool wide_ids = GENERATE(false, true);
  const std::int64_t width = GENERATE(1, 5, 16, 33);
  CAPTURE(weighted, wide_ids, width);
  constexpr std::int64_t owned = 400;
  constexpr std::int64_t halo = 150;
  const graph::CsrGraph a = wide_ids ? random_part<std::int64_t>(21, owned, halo, weighted)
                                     : random_part<std::int32_t>(21, owned, halo, weighted);
  const RowSplit split = split_rows_by_column(a, owned);
  REQUIRE(split.interior.num_edges() + split.boundary.num_edges() == a.num_edges());
  REQUIRE(split.interior.num_edges() > 0);
  REQUIRE(split.boundary.num_edges() > 0);
  CHECK(split.interior.index_type() == a.index_type());
  CHECK(split.interior.has_weights() == weighted);

  Tensor x = random_tensor(22, owned + halo, width);
  Tensor want = Tensor::empty(owned, width);
  kernels::spmm(a, x.view(), want.view());
  // The interior rows never read a halo row: NaN there would show.
  Tensor poisoned = x.clone();
  kernels::fill(poisoned.view().slice_rows(owned, owned + halo), std::nanf(""));
  Tensor got = Tensor::full(owned, width, std::nanf(""));
  kernels::spmm(split.interior, poisoned.view(), got.view(), Accumulate::overwrite);
  kernels::spmm(split.boundary, x.view(), got.view(), Accumulate::add);
  CHECK(same_bits(got, want));
}

TEST_CASE("row_range keeps the rows from begin to end whole, and multiplies as those rows of the whole CSR", "[train]") {
  const graph::CsrGraph a = random_part<std::int32_t>(31, 300, 100, true);
  const Tensor x = random_tensor(32, 400, 9);
  Tensor whole = Tensor::empty(300, 9);
  kernels::spmm(a, x.view(), whole.view());
  const std::vector<std::pair<std::int64_t, std::int64_t>> ranges{{0, 300}, {0, 120}, {120, 300}, {7, 7}};
  for (const auto& [begin, end] : ranges) {
    CAPTURE(begin, end);
    const graph::CsrGraph rows = row_range(a, begin, end);
    CHECK(rows.num_rows() == end - begin);
    CHECK(rows.num_cols() == 400);
    CHECK(rows.num_edges() == a.indptr()[end] - a.indptr()[begin]);
    Tensor got = Tensor::full(end - begin, 9, std::nanf(""));
    kernels::spmm(rows, x.view(), got.view());
    CHECK(same_bits(got, rows_of(whole, begin, end)));
  }
  CHECK_THROWS_AS(row_range(a, 5, 4), InvalidArgument);
  CHECK_THROWS_WITH(row_range(a, 0, 301), Catch::Contains("[0, 301)") && Catch::Contains("300-row"));
}
