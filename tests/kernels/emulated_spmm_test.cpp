// halo's CUDA SpMM kernels (kernels/cuda/spmm_kernels.cuh) run on the CPU by
// tests/support/cuda_emulator.hpp (every lane as written, each group's shuffles over its own
// lanes) against the CPU's spmm, launched as kernels/cuda/spmm.cu launches them: the rows
// kernel, and for rows longer than long_row_chunk_entries the chunks kernel and the combine in chunk
// order. Rows empty, short, at, just past and twice the chunk length and longer; both index widths,
// weighted and unweighted, overwrite and add; widths from 1 to 256 with 4-byte and 16-byte loads
// (several column tiles, groups of 1 to 32 lanes); strided views whose padding must stay
// untouched; the same bits on another launch shape with the lanes run in reverse order.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/random.hpp"
#include "graph/csr.hpp"
#include "kernels/spmm.hpp"
#include "tests/kernels/kernel_test_util.hpp"

// After every other header and before the kernels': it defines the CUDA qualifiers and built-ins
// they use.
// clang-format off
#include "tests/support/cuda_emulator.hpp"
#include "kernels/cuda/spmm_kernels.cuh"
// clang-format on

using namespace halo;
using namespace halo::kernels;
namespace emulator = halo::test::cuda_emulator;
namespace sk = halo::kernels::cuda::spmm_kernels;

namespace {

constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();

// 300 x 200: a fifth of the rows empty, most with 1..12 entries (repeats allowed); rows 10, 11
// and 12 with exactly long_row_chunk_entries entries, one more and two chunks' worth, row 150 with
// 1500; weights multiples of 1/8 in [-2, 2).
template <class I>
graph::CsrGraph long_row_graph(bool weighted) {
  RandomStream rng(31, 1);
  const std::int64_t rows = 300, cols = 200, chunk = kernels::cuda::long_row_chunk_entries;
  std::vector<std::int64_t> indptr{0};
  std::vector<I> indices;
  std::vector<float> weights;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t degree = rng.below(5) == 0 ? 0 : 1 + static_cast<std::int64_t>(rng.below(12));
    if (r == 10) degree = chunk;
    if (r == 11) degree = chunk + 1;
    if (r == 12) degree = 2 * chunk;
    if (r == 150) degree = 1500;
    for (std::int64_t e = 0; e < degree; ++e) {
      indices.push_back(static_cast<I>(rng.below(static_cast<std::uint64_t>(cols))));
      weights.push_back(static_cast<float>(static_cast<std::int64_t>(rng.below(32)) - 16) / 8.0f);
    }
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  return graph::CsrGraph(rows, cols, Array<std::int64_t>::from_vector(indptr), Array<I>::from_vector(indices),
                         weighted ? Array<float>::from_vector(weights) : Array<float>{});
}

// out (+)= a · x by the emulated kernels with `VEC`-float loads, as spmm.cu's launch_halo runs
// them (blocks of `block` threads instead of 256).
template <class I, int VEC>
void emulated_spmm(const graph::CsrView<I>& a, ConstTensorView x, TensorView out, bool accumulate, unsigned int block,
                   bool reversed) {
  const std::int64_t width = x.cols;
  const int group = sk::group_size(width, VEC == 4);
  const sk::SpmmArgs<I> p{a.indptr, a.indices, a.weights, x.data, x.stride, width, group};
  const auto tiles = static_cast<unsigned int>(sk::column_tiles(width, group, VEC));
  const auto shape = [&](std::int64_t groups) {
    return emulator::LaunchShape{static_cast<unsigned int>(sk::group_blocks(groups, group, static_cast<int>(block))),
                                 block, reversed, tiles};
  };
  emulator::launch(shape(a.num_rows), sk::spmm_rows_kernel<I, VEC>, p, a.num_rows, out.data, out.stride, accumulate);
  const kernels::cuda::LongRowChunks list = kernels::cuda::long_row_chunks(a.indptr, a.num_rows);
  const auto chunks = static_cast<std::int64_t>(list.chunk_begin.size());
  if (chunks == 0) return;
  std::vector<float> partial(static_cast<std::size_t>(chunks * width), nan_value);
  emulator::launch(shape(chunks), sk::spmm_chunks_kernel<I, VEC>, p, list.chunk_begin.data(), list.chunk_end.data(),
                   chunks, partial.data());
  const kernels::cuda::AddChunks combine{list.long_rows.data(),         list.chunk_offsets.data(), partial.data(),
                                         {out.data, out.stride, width}, {nullptr, 0, 0},           accumulate};
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(list.long_rows.size()); ++k)
    for (std::int64_t j = 0; j < width; ++j) combine(k, j);
}

}  // namespace

TEST_CASE("halo's CUDA SpMM kernels run lane by lane on the CPU equal the CPU's spmm whatever the launch shape",
          "[kernels]") {
  const bool wide = GENERATE(false, true);
  const bool weighted = GENERATE(true, false);
  const bool accumulate = GENERATE(false, true);
  // Groups of 1 to 32 lanes; 4-byte loads at every width, 16-byte ones where the width allows;
  // 256 columns at 4-byte loads take four tiles of 64.
  const std::int64_t width = GENERATE(1, 3, 8, 36, 64, 100, 256);
  const int vec = GENERATE(1, 4);
  if (vec == 4 && width % 4 != 0) return;
  CAPTURE(wide, weighted, accumulate, width, vec);
  const graph::CsrGraph a = wide ? long_row_graph<std::int64_t>(weighted) : long_row_graph<std::int32_t>(weighted);
  RandomStream rng(32, 0);
  // Rows padded by 4 floats: 16-byte aligned row starts, and padding that must stay as it was.
  const test::Strided x = test::strided_copy(test::random_tensor(rng, a.num_cols(), width), 4);
  const Tensor start = test::random_tensor(rng, a.num_rows(), width);
  const auto output = [&] {
    return accumulate ? test::strided_copy(start, 4, nan_value) : test::Strided(a.num_rows(), width, 4, nan_value);
  };
  test::Strided expected = output();
  spmm(a, x.view, expected.view, accumulate ? Accumulate::add : Accumulate::overwrite);
  const auto run = [&](unsigned int block, bool reversed) {
    test::Strided out = output();
    graph::visit(a, [&](const auto& view) {
      using I = std::remove_const_t<std::remove_pointer_t<decltype(view.indices)>>;
      if (vec == 4)
        emulated_spmm<I, 4>(view, x.view, out.view, accumulate, block, reversed);
      else
        emulated_spmm<I, 1>(view, x.view, out.view, accumulate, block, reversed);
    });
    return out;
  };
  const test::Strided out = run(64, false);
  CHECK(test::difference(out.view, test::to_dense(expected.view), 1e-5, 1e-4) == "");
  CHECK(out.padding_intact(nan_value));
  // Another grid (one warp a block), the lanes run last to first: the same bits.
  if (width == 36 || width == 100) CHECK(test::identical(run(32, true).view, out.view));
}
