// Tests of kernels/rows.*: gather and scatter-add against the naive double reference (repeated
// indices, strided views), the same bits on any thread count, and out-of-range indices.
#include "kernels/rows.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

std::vector<std::int64_t> random_index(RandomStream& rng, std::int64_t n, std::int64_t bound) {
  std::vector<std::int64_t> index(static_cast<std::size_t>(n));
  for (auto& i : index) i = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(bound)));
  return index;
}

}  // namespace

//  src rows r0 = [1 2], r1 = [3 4], r2 = [5 6], index {2, 0, 2}: gather gives r2 r0 r2;
//  scatter-add of rows r0 r1 r2 with index {2, 0, 2}: out0 = r1, out1 = 0, out2 = r0 + r2
TEST_CASE("gather_rows and scatter_add_rows move hand-drawn rows", "[kernels]") {
  const Tensor src = Tensor::from_vector(3, 2, {1, 2, 3, 4, 5, 6});
  const std::vector<std::int64_t> index{2, 0, 2};
  Tensor gathered = test::poisoned(3, 2);
  gather_rows(src.view(), test::index_view(index), gathered.view());
  CHECK(gathered.to_vector() == std::vector<float>{5, 6, 1, 2, 5, 6});
  Tensor out = Tensor::zeros(3, 2);
  scatter_add_rows(src.view(), test::index_view(index), out.view());
  CHECK(out.to_vector() == std::vector<float>{3, 4, 0, 0, 6, 8});
}

TEST_CASE("gather_rows matches the reference on random indices and strided views", "[kernels]") {
  RandomStream rng(41, 0);
  for (const std::int64_t cols : {1, 7, 64}) {
    const Tensor src = test::random_tensor(rng, 50, cols);
    const std::vector<std::int64_t> index = random_index(rng, 120, 50);
    const test::Strided src_s = test::strided_copy(src, 3);
    test::Strided out(120, cols, 2, std::numeric_limits<float>::quiet_NaN());
    gather_rows(src_s.view, test::index_view(index), out.view);
    CHECK(test::difference(out.view, test::naive_gather_rows(test::to_dense(src.view()), index), 0, 0) == "");
    CHECK(out.padding_intact(std::numeric_limits<float>::quiet_NaN()));
  }
}

TEST_CASE("scatter_add_rows matches the reference with repeated targets", "[kernels]") {
  RandomStream rng(42, 0);
  for (const std::int64_t cols : {1, 5, 16, 70}) {
    const Tensor src = test::random_tensor(rng, 400, cols);
    const std::vector<std::int64_t> index = random_index(rng, 400, 37);  // about 11 additions per target
    const Tensor start = test::random_tensor(rng, 37, cols);
    test::Strided out = test::strided_copy(start, 4);
    scatter_add_rows(src.view(), test::index_view(index), out.view);
    const test::Dense expected =
        test::naive_scatter_add_rows(test::to_dense(src.view()), index, test::to_dense(start.view()));
    CHECK(test::difference(out.view, expected, 1e-5, 1e-5) == "");
    CHECK(out.padding_intact(1e30f));
  }
}

TEST_CASE("scatter_add_rows gives the same bits on 1, 2 and 3 threads", "[kernels]") {
  RandomStream rng(43, 0);
  for (const std::int64_t cols : {3, 40}) {
    const Tensor src = test::random_tensor(rng, 5000, cols);
    const std::vector<std::int64_t> index = random_index(rng, 5000, 300);
    Tensor one = Tensor::zeros(300, cols);
    test::with_threads(1, [&] { scatter_add_rows(src.view(), test::index_view(index), one.view()); });
    for (const int threads : {2, 3}) {
      Tensor other = Tensor::zeros(300, cols);
      test::with_threads(threads, [&] { scatter_add_rows(src.view(), test::index_view(index), other.view()); });
      CHECK(test::identical(one.view(), other.view()));
    }
  }
}

TEST_CASE("gather_rows and scatter_add_rows name an out-of-range index", "[kernels]") {
  const Tensor src = Tensor::zeros(3, 2);
  const std::vector<std::int64_t> bad{0, 3, 1};
  Tensor out = Tensor::zeros(3, 2);
  CHECK_THROWS_WITH(gather_rows(src.view(), test::index_view(bad), out.view()),
                    Catch::Contains("gather_rows: index[1] = 3 is outside [0, 3)"));
  const std::vector<std::int64_t> negative{0, 1, -1};
  CHECK_THROWS_WITH(scatter_add_rows(src.view(), test::index_view(negative), out.view()),
                    Catch::Contains("scatter_add_rows: index[2] = -1 is outside [0, 3)"));
  Tensor short_out = Tensor::zeros(2, 2);
  CHECK_THROWS_WITH(gather_rows(src.view(), test::index_view(bad), short_out.view()), Catch::Contains("out must be 3 x 2"));
  CHECK_THROWS_WITH(scatter_add_rows(src.view(), test::index_view(std::vector<std::int64_t>{0}), out.view()),
                    Catch::Contains("expected 3 entries, got 1"));
}
