// The CUDA attention kernels run on the CPU (tests/support/cuda_emulator.hpp: every lane as
// written, the warp's lanes taking turns at each shuffle) against their CPU twins: GAT's
// (kernels/cuda/attention_kernels.cuh) and the dot-product attention of HGT
// (dot_attention_kernels.cuh), on the shapes of their [gpu] tests (1 to 12 heads, heads narrower
// than a warp and wider than one pass of 128 columns, a hub row, empty rows, dropout keyed on
// global ids past 2^32, fewer sources than destinations, strided operands and outputs), long rows
// of A and of Aᵀ cut into chunks (attention_chunks.cuh) and merged by the combines, the same bits
// on another grid with the lanes run in reverse order (which a race on shared memory would
// change), no read of what a dropped entry's head would have gathered (NaN there changes
// nothing), and a dst-score gradient of exactly 0 for rows whose scores have one sign. This checks the kernels' logic on every machine; what only a GPU shows (its memory
// model, its rounding of expf, its speed) is left to the [gpu] tests and tools/device-check.sh.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "kernels/attention.hpp"
#include "kernels/device_index.hpp"
#include "kernels/dot_attention.hpp"
#include "tests/kernels/attention_graphs.hpp"
#include "tests/kernels/kernel_test_util.hpp"

// After every other header and before the kernels': it defines the CUDA qualifiers and built-ins
// they use.
// clang-format off
#include "tests/support/cuda_emulator.hpp"
#include "kernels/cuda/attention_chunks.cuh"
#include "kernels/cuda/attention_kernels.cuh"
#include "kernels/cuda/dot_attention_kernels.cuh"
// clang-format on

using namespace halo;
using namespace halo::kernels;
namespace emulator = halo::test::cuda_emulator;

namespace {

// The launches the emulated kernels run in: one warp, and three blocks of two warps with each
// round of lanes run last to first (rows handed out by the grid-stride loops differently, two
// warps sharing a block's shared memory, and a race on it caught by a changed result).
constexpr emulator::LaunchShape one_warp{1, 32, false}, three_blocks{3, 64, true};

// The six outputs of a forward and backward: out, row_max, row_sum and three gradients, each a
// window of NaN in a tensor whose padding columns hold NaN too (none when the problem's pad is 0).
struct Outputs {
  test::Strided out, row_max, row_sum, grad_a, grad_b, grad_c;
  // Whether every output's padding is still NaN: no kernel wrote past its window.
  bool padding_intact() const {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    return out.padding_intact(nan) && row_max.padding_intact(nan) && row_sum.padding_intact(nan) &&
           grad_a.padding_intact(nan) && grad_b.padding_intact(nan) && grad_c.padding_intact(nan);
  }
};

// Rows longer than this are cut into chunks here (512 on a GPU): the hub row of A (200 entries)
// into 64, 64, 64 and 8, the sink's row of Aᵀ (about a hundred) into two, each chunk of more than
// 32 entries (a warp's turn in shared memory) but the last.
constexpr std::int64_t test_chunk_entries = 64;

// A CSR's chunk list (test_chunk_entries a chunk) and the kernels' view of it.
struct Chunks {
  cuda::LongRowChunks list;
  cuda::RowChunks view;
  template <class I>
  explicit Chunks(const graph::CsrView<I>& a)
      : list(cuda::long_row_chunks(a.indptr, a.num_rows, test_chunk_entries)),
        view{list.chunk_row.data(), list.chunk_begin.data(), list.chunk_end.data(),
             static_cast<std::int64_t>(list.chunk_row.size()), test_chunk_entries} {}
  std::int64_t long_rows() const { return static_cast<std::int64_t>(list.long_rows.size()); }
  // Scratch for `cols` partial results a chunk, poisoned.
  std::vector<float> partial(std::int64_t cols) const {
    return std::vector<float>(static_cast<std::size_t>(view.count * cols), std::numeric_limits<float>::quiet_NaN());
  }
  // A combine's elementwise launch over the long rows and `cols` columns.
  template <class Combine>
  void combine(std::int64_t cols, const Combine& op) const {
    for (std::int64_t k = 0; k < long_rows(); ++k)
      for (std::int64_t c = 0; c < cols; ++c) op(k, c);
  }
};

// The runs of one test case: the graph (128 destination rows by `cols` source columns, a hub row
// of 200 entries, every row with entries pointing at column 5 first), its transpose, the ids the
// dropout is keyed on, and the padding of every operand's and output's rows (`pad` columns past
// the window: strided views, as a layer's slices of wider tensors are). Smaller than the [gpu]
// tests' (800 rows, a hub of 1200): every lane's switch at a warp-wide call costs a swapcontext
// here.
struct Problem {
  graph::CsrGraph a, at;
  std::vector<std::int64_t> dst_ids, src_ids;
  float p;
  DropoutKey key{4, 5, 6};
  std::int64_t pad;

  Problem(std::uint64_t seed, bool wide, float dropout, std::int64_t cols, std::int64_t padding)
      : a(test::hub_block(seed, 128, cols, 3, 200, wide, 5)), at(graph::transpose(a)), p(dropout), pad(padding) {
    // With 64-bit indices the draws are keyed on ids past 2^32 (the rows' and the columns' apart).
    if (wide) dst_ids = test::far_ids(a.num_rows(), false), src_ids = test::far_ids(a.num_cols(), true);
  }
  std::int64_t rows() const { return a.num_rows(); }
  std::int64_t cols() const { return a.num_cols(); }
  // The kernels' mask with host arrays: keyed on dst_ids and src_ids when they are not empty, else
  // on the row and column numbers.
  cuda::DeviceEdgeMask mask() const {
    return cuda::device_edge_mask(p, key, dst_ids.empty() ? nullptr : dst_ids.data(),
                                  src_ids.empty() ? nullptr : src_ids.data());
  }
  // go(a, at) with the host views of one index width, and the ids for the CPU twins.
  template <class Go>
  void on_host(Go&& go) const {
    const test::KeyedIds keyed(dst_ids, src_ids, Device::cpu());
    test::with_csr_pair(a, at, Device::cpu(), [&](const auto& av, const auto& atv) { go(av, atv, keyed.ids()); });
  }
  // An output of r x c: NaN, its padding too.
  test::Strided output(std::int64_t r, std::int64_t c) const {
    return test::Strided(r, c, pad, std::numeric_limits<float>::quiet_NaN());
  }
  // An operand's copy in a strided window (its padding 1e30, which spoils any sum that reads it).
  test::Strided operand(const Tensor& x) const { return test::strided_copy(x, pad); }
};

// The problems of the comparisons with the CPU twins: with 32-bit indices A is 128 x 80 (fewer
// sources than destinations) and every operand and output a strided window (3 columns of
// padding); with 64-bit ones A is square and packed, the ids of its rows and columns past 2^32.
Problem compared(std::uint64_t seed, bool wide, float p) {
  return wide ? Problem(seed, true, p, 128, 0) : Problem(seed, false, p, 80, 3);
}

// GAT: h (cols x heads·F), per-head scores src (cols x heads) and dst (rows x heads), the
// output's gradient g (rows x heads·F), each in the problem's strided window.
struct GatInputs {
  test::Strided h, src, dst, g;
  std::int64_t heads;
};

GatInputs gat_inputs(const Problem& pr, const Tensor& h, const Tensor& src, const Tensor& dst, const Tensor& g,
                     std::int64_t heads) {
  return {pr.operand(h), pr.operand(src), pr.operand(dst), pr.operand(g), heads};
}

// Random inputs of `heads` heads `width` wide (h also in `h_out` when given).
GatInputs random_gat_inputs(const Problem& pr, std::uint64_t seed, std::int64_t heads, std::int64_t width,
                            Tensor* h_out = nullptr) {
  RandomStream rng(seed, 0);
  Tensor h = test::random_tensor(rng, pr.cols(), heads * width);
  const Tensor src = test::random_tensor(rng, pr.cols(), heads, -2.0, 2.0);
  const Tensor dst = test::random_tensor(rng, pr.rows(), heads, -2.0, 2.0);
  const Tensor g = test::random_tensor(rng, pr.rows(), heads * width);
  GatInputs in = gat_inputs(pr, h, src, dst, g, heads);
  if (h_out != nullptr) *h_out = std::move(h);
  return in;
}

// grad_a = grad_h, grad_b = grad_src, grad_c = grad_dst.
Outputs gat_outputs(const Problem& pr, const GatInputs& in) {
  const std::int64_t m = pr.rows(), n = pr.cols(), c = in.h.view.cols, heads = in.heads;
  return {pr.output(m, c), pr.output(m, heads), pr.output(m, heads),
          pr.output(n, c), pr.output(n, heads), pr.output(m, heads)};
}

Outputs gat_on_cpu(const Problem& pr, const GatInputs& in) {
  Outputs o = gat_outputs(pr, in);
  const AttentionSpec spec{in.heads, 0.2f, pr.p, pr.key};
  pr.on_host([&](const auto& a, const auto& at, AttentionIds ids) {
    attention_forward(a, in.h.view, in.src.view, in.dst.view, spec, ids, o.out.view, o.row_max.view, o.row_sum.view);
    attention_backward(a, at, in.h.view, in.src.view, in.dst.view, spec, ids, o.row_max.view, o.row_sum.view, in.g.view,
                       o.grad_a.view, o.grad_b.view, o.grad_c.view);
  });
  return o;
}

// The launches of kernels/cuda/attention.cu, emulated.
Outputs gat_emulated(const Problem& pr, const GatInputs& in, emulator::LaunchShape shape) {
  const std::int64_t c = in.h.view.cols, heads = in.heads;
  Outputs o = gat_outputs(pr, in);
  Tensor workspace = test::poisoned(pr.rows(), attention_workspace_width(heads, true));
  const cuda::gat_kernels::Operands ops{in.h.view.data,
                                        in.h.view.stride,
                                        in.src.view.data,
                                        in.src.view.stride,
                                        in.dst.view.data,
                                        in.dst.view.stride,
                                        heads,
                                        c / heads,
                                        0.2f,
                                        pr.mask()};
  const TensorView row_max = o.row_max.view, row_sum = o.row_sum.view, g = in.g.view;
  pr.on_host([&](const auto& a, const auto& at, AttentionIds) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(a.indices)>>;
    namespace gk = cuda::gat_kernels;
    const Chunks chunks(a), chunks_t(at);
    REQUIRE((chunks.long_rows() == 1 && chunks_t.long_rows() == 1));
    std::vector<float> partial = chunks.partial(2 * heads + c);
    const auto outputs = cuda::SoftmaxOutputs::of(o.out.view, row_max, row_sum, partial.data(), heads, c);
    emulator::launch(shape, gk::forward_kernel<I>, a.indptr, a.indices, a.num_rows, chunks.view, ops, outputs);
    chunks.combine(c + heads, cuda::CombineSoftmaxChunks{chunks.list.long_rows.data(), chunks.list.chunk_offsets.data(),
                                                         outputs, c / heads});
    partial = chunks.partial(3 * heads);
    const gk::DstOutputs dst{o.grad_c.view.data, o.grad_c.view.stride, workspace.data(), heads, partial.data(), heads};
    emulator::launch(shape, gk::dst_kernel<I>, a.indptr, a.indices, a.num_rows, chunks.view, ops, row_max.data,
                     row_max.stride, row_sum.data, row_sum.stride, g.data, g.stride, dst);
    chunks.combine(heads, gk::CombineDstChunks{chunks.list.long_rows.data(), chunks.list.chunk_offsets.data(), dst});
    partial = chunks_t.partial(c + heads);
    const cuda::RowSums sums{{o.grad_a.view.data, o.grad_a.view.stride, c},
                             {o.grad_b.view.data, o.grad_b.view.stride, heads},
                             partial.data()};
    emulator::launch(shape, gk::src_kernel<I>, at.indptr, at.indices, at.num_rows, chunks_t.view, ops, row_max.data,
                     row_max.stride, row_sum.data, row_sum.stride, g.data, g.stride, workspace.data(), heads, sums);
    chunks_t.combine(c + heads, sums.combine(chunks_t.list.long_rows.data(), chunks_t.list.chunk_offsets.data()));
  });
  return o;
}

// HGT's dot-product attention: queries (rows x heads·Fk), keys (cols x heads·Fk), values (cols x
// heads·Fv) and the output's gradient g (rows x heads·Fv), each in the problem's strided window.
struct DotInputs {
  test::Strided q, k, v, g;
  std::int64_t heads;
};

DotInputs dot_inputs(const Problem& pr, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g,
                     std::int64_t heads) {
  return {pr.operand(q), pr.operand(k), pr.operand(v), pr.operand(g), heads};
}

// Random inputs of `heads` heads, keys fk and values fv wide (v also in `v_out` when given).
DotInputs random_dot_inputs(const Problem& pr, std::uint64_t seed, std::int64_t heads, std::int64_t fk, std::int64_t fv,
                            Tensor* v_out = nullptr) {
  RandomStream rng(seed, 0);
  const Tensor q = test::random_tensor(rng, pr.rows(), heads * fk);
  const Tensor k = test::random_tensor(rng, pr.cols(), heads * fk);
  Tensor v = test::random_tensor(rng, pr.cols(), heads * fv);
  const Tensor g = test::random_tensor(rng, pr.rows(), heads * fv);
  DotInputs in = dot_inputs(pr, q, k, v, g, heads);
  if (v_out != nullptr) *v_out = std::move(v);
  return in;
}

// grad_a = grad_q, grad_b = grad_k, grad_c = grad_v.
Outputs dot_outputs(const Problem& pr, const DotInputs& in) {
  const std::int64_t m = pr.rows(), n = pr.cols(), heads = in.heads;
  return {pr.output(m, in.v.view.cols), pr.output(m, heads),          pr.output(m, heads),
          pr.output(m, in.q.view.cols), pr.output(n, in.k.view.cols), pr.output(n, in.v.view.cols)};
}

Outputs dot_on_cpu(const Problem& pr, const DotInputs& in) {
  Outputs o = dot_outputs(pr, in);
  const DotAttentionSpec spec{in.heads, pr.p, pr.key};
  pr.on_host([&](const auto& a, const auto& at, AttentionIds ids) {
    dot_attention_forward(a, in.q.view, in.k.view, in.v.view, spec, ids, o.out.view, o.row_max.view, o.row_sum.view);
    dot_attention_backward(a, at, in.q.view, in.k.view, in.v.view, spec, ids, o.row_max.view, o.row_sum.view, in.g.view,
                           o.grad_a.view, o.grad_b.view, o.grad_c.view);
  });
  return o;
}

// The launches of kernels/cuda/dot_attention.cu, emulated.
Outputs dot_emulated(const Problem& pr, const DotInputs& in, emulator::LaunchShape shape) {
  const std::int64_t heads = in.heads;
  const std::int64_t cq = in.q.view.cols, ck = in.k.view.cols, cv = in.v.view.cols;
  Outputs o = dot_outputs(pr, in);
  Tensor workspace = test::poisoned(pr.rows(), heads);
  const cuda::dot_kernels::Operands ops{in.q.view.data,
                                        in.q.view.stride,
                                        in.k.view.data,
                                        in.k.view.stride,
                                        in.v.view.data,
                                        in.v.view.stride,
                                        heads,
                                        static_cast<int>(ck / heads),
                                        static_cast<int>(cv / heads),
                                        pr.mask()};
  const TensorView row_max = o.row_max.view, row_sum = o.row_sum.view, g = in.g.view;
  pr.on_host([&](const auto& a, const auto& at, AttentionIds) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(a.indices)>>;
    namespace dk = cuda::dot_kernels;
    const Chunks chunks(a), chunks_t(at);
    REQUIRE((chunks.long_rows() == 1 && chunks_t.long_rows() == 1));
    const std::int64_t* long_rows = chunks.list.long_rows.data();
    const std::int64_t* offsets = chunks.list.chunk_offsets.data();
    std::vector<float> partial = chunks.partial(2 * heads + cv);
    const auto outputs = cuda::SoftmaxOutputs::of(o.out.view, row_max, row_sum, partial.data(), heads, cv);
    emulator::launch(shape, dk::forward_kernel<I>, a.indptr, a.indices, a.num_rows, chunks.view, ops, outputs);
    chunks.combine(cv + heads, cuda::CombineSoftmaxChunks{long_rows, offsets, outputs, cv / heads});
    // As dot_attention.cu: the whole rows and the chunks' parts of c; their c; their grad_query.
    std::vector<float> c_partial = chunks.partial(heads), query_partial = chunks.partial(cq);
    const cuda::RowSums c_sums{{workspace.data(), heads, heads}, {nullptr, 0, 0}, c_partial.data()};
    const cuda::RowSums query_sums{
        {o.grad_a.view.data, o.grad_a.view.stride, cq}, {nullptr, 0, 0}, query_partial.data()};
    for (const bool second : {false, true}) {
      emulator::launch(shape, dk::dst_kernel<I>, a.indptr, a.indices, a.num_rows, chunks.view, second, ops,
                       row_max.data, row_max.stride, row_sum.data, row_sum.stride, g.data, g.stride, query_sums,
                       c_sums);
      chunks.combine(second ? cq : heads, (second ? query_sums : c_sums).combine(long_rows, offsets));
    }
    partial = chunks_t.partial(ck + cv);
    const cuda::RowSums sums{
        {o.grad_b.view.data, o.grad_b.view.stride, ck}, {o.grad_c.view.data, o.grad_c.view.stride, cv}, partial.data()};
    emulator::launch(shape, dk::src_kernel<I>, at.indptr, at.indices, at.num_rows, chunks_t.view, ops, row_max.data,
                     row_max.stride, row_sum.data, row_sum.stride, g.data, g.stride, workspace.data(), heads, sums);
    chunks_t.combine(ck + cv, sums.combine(chunks_t.list.long_rows.data(), chunks_t.list.chunk_offsets.data()));
  });
  return o;
}

// Within rounding of the CPU twin's (the sums are ordered differently): `gradient_rel` for the
// gradients, whose sums cancel more. And nothing written past an output's window.
void check_close(const Outputs& emulated, const Outputs& cpu, double gradient_rel) {
  CHECK(test::difference(emulated.out.view, test::to_dense(cpu.out.view), 1e-4, 1e-5) == "");
  CHECK(test::difference(emulated.row_max.view, test::to_dense(cpu.row_max.view), 1e-4, 1e-5) == "");
  CHECK(test::difference(emulated.row_sum.view, test::to_dense(cpu.row_sum.view), 1e-4, 1e-5) == "");
  CHECK(test::difference(emulated.grad_a.view, test::to_dense(cpu.grad_a.view), gradient_rel, 1e-4) == "");
  CHECK(test::difference(emulated.grad_b.view, test::to_dense(cpu.grad_b.view), gradient_rel, 1e-4) == "");
  CHECK(test::difference(emulated.grad_c.view, test::to_dense(cpu.grad_c.view), gradient_rel, 1e-4) == "");
  CHECK(emulated.padding_intact());
}

void check_identical(const Outputs& x, const Outputs& y) {
  CHECK(test::identical(x.out.view, y.out.view));
  CHECK(test::identical(x.row_max.view, y.row_max.view));
  CHECK(test::identical(x.row_sum.view, y.row_sum.view));
  CHECK(test::identical(x.grad_a.view, y.grad_a.view));
  CHECK(test::identical(x.grad_b.view, y.grad_b.view));
  CHECK(test::identical(x.grad_c.view, y.grad_c.view));
}

}  // namespace

TEST_CASE("GAT's CUDA attention kernels run lane by lane on the CPU equal the CPU twin's whatever the launch shape",
          "[kernels]") {
  const bool wide = GENERATE(false, true);
  const float p = GENERATE(0.0f, 0.6f);
  // Heads in blocks of 8 (one dropout draw per entry and block): one block, part of one, one and
  // a part; head widths below and past a warp, and past the 128 columns of one pass (a head's
  // columns in two passes, which compute the coefficients of their own heads only).
  const std::int64_t heads = GENERATE(1, 3, 8, 12);
  const std::int64_t width = GENERATE(7, 40, 129);
  CAPTURE(wide, p, heads, width);
  const Problem pr = compared(17, wide, p);
  const GatInputs in = random_gat_inputs(pr, 18, heads, width);
  const Outputs emulated = gat_emulated(pr, in, one_warp);
  check_close(emulated, gat_on_cpu(pr, in), 1e-3);
  // The launch's shape on the shapes of two head blocks (a quarter of the cases, for time).
  if (heads == 12) check_identical(gat_emulated(pr, in, three_blocks), emulated);
}

TEST_CASE(
    "A destination whose scores all have one sign gets a dst-score gradient of exactly 0 on the CPU and from "
    "the CUDA kernels",
    "[kernels]") {
  // Its dst score cancels in the softmax: its gradient is 0, not rounding noise that Adam would
  // scale to whole steps. Every row here, the long one (in chunks) among them, under dropout.
  const bool wide = GENERATE(false, true);
  const double shift = GENERATE(4.0, -6.0);  // every score in [1, 7], or every one in [-9, -3]
  CAPTURE(wide, shift);
  const Problem pr = compared(37, wide, 0.6f);
  const std::int64_t heads = 3, width = 40;
  RandomStream rng(38, 0);
  const Tensor h = test::random_tensor(rng, pr.cols(), heads * width);
  const Tensor src = test::random_tensor(rng, pr.cols(), heads, shift - 1.0, shift + 1.0);
  const Tensor dst = test::random_tensor(rng, pr.rows(), heads, -2.0, 2.0);
  const Tensor g = test::random_tensor(rng, pr.rows(), heads * width);
  const GatInputs in = gat_inputs(pr, h, src, dst, g, heads);
  const auto check = [&](const Outputs& o) {
    std::int64_t nonzero_dst = 0, nonzero_src = 0;
    for (std::int64_t i = 0; i < pr.rows(); ++i)
      for (std::int64_t k = 0; k < heads; ++k) nonzero_dst += o.grad_c.view.row(i)[k] != 0.0f ? 1 : 0;
    for (std::int64_t j = 0; j < pr.cols(); ++j)
      for (std::int64_t k = 0; k < heads; ++k) nonzero_src += o.grad_b.view.row(j)[k] != 0.0f ? 1 : 0;
    CHECK(nonzero_dst == 0);
    CHECK(nonzero_src > 0);  // the sources' scores do not cancel
  };
  check(gat_on_cpu(pr, in));
  check(gat_emulated(pr, in, one_warp));
}

TEST_CASE(
    "HGT's CUDA dot-product attention kernels run lane by lane on the CPU equal the CPU twin's whatever the "
    "launch shape",
    "[kernels]") {
  const bool wide = GENERATE(false, true);
  const float p = GENERATE(0.0f, 0.6f);
  const std::int64_t heads = GENERATE(1, 3, 8, 12);
  // Key and value widths apart: one below 8 and one past a warp (33); 40 and 33 columns a head
  // split a block's heads over several passes; 130 and 129 split one head's columns over two.
  const int widths = GENERATE(0, 1, 2);
  const std::int64_t fk = widths == 0 ? 7 : widths == 1 ? 33 : 130, fv = widths == 0 ? 40 : widths == 1 ? 8 : 129;
  CAPTURE(wide, p, heads, fk, fv);
  const Problem pr = compared(27, wide, p);
  const DotInputs in = random_dot_inputs(pr, 28, heads, fk, fv);
  const Outputs emulated = dot_emulated(pr, in, one_warp);
  check_close(emulated, dot_on_cpu(pr, in), 1e-3);
  if (heads == 12) check_identical(dot_emulated(pr, in, three_blocks), emulated);
}

TEST_CASE("The CUDA attention kernels read no row slice of an entry's head that the dropout drops", "[kernels]") {
  const bool wide = GENERATE(false, true);
  const std::int64_t heads = 12, width = 9;
  CAPTURE(wide);
  std::int64_t poisoned = 0;
  // Square: with fewer columns than rows, sources of a single entry are too rare.
  SECTION("GAT: h_j, gathered forward and dotted with g_i in both backward passes") {
    const Problem pr(37, wide, 0.6f, 128, wide ? 0 : 3);
    Tensor h;
    GatInputs in = random_gat_inputs(pr, 38, heads, width, &h);
    const Outputs clean = gat_emulated(pr, in, one_warp);
    in.h = pr.operand(test::nan_in_dropped_slices(pr.at, pr.dst_ids, pr.src_ids, pr.key, pr.p, h, heads, poisoned));
    REQUIRE(poisoned >= 10);
    check_identical(gat_emulated(pr, in, one_warp), clean);
  }
  SECTION("HGT: v_j, gathered forward and dotted with g_i in both backward passes") {
    const Problem pr(47, wide, 0.6f, 128, wide ? 0 : 3);
    Tensor v;
    DotInputs in = random_dot_inputs(pr, 48, heads, 5, width, &v);
    const Outputs clean = dot_emulated(pr, in, one_warp);
    in.v = pr.operand(test::nan_in_dropped_slices(pr.at, pr.dst_ids, pr.src_ids, pr.key, pr.p, v, heads, poisoned));
    REQUIRE(poisoned >= 10);
    check_identical(dot_emulated(pr, in, one_warp), clean);
  }
}

TEST_CASE("the CUDA emulator refuses lanes that leave a warp-wide call short and shows a race by its order",
          "[kernels]") {
  float out[64] = {};
  const auto diverging = [](float* values) {
    const unsigned int lane = threadIdx.x % 32;
    if (lane < 16) values[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
  };
  CHECK_THROWS_WITH(emulator::launch({1, 64}, diverging, out),
                    Catch::Contains("diverged") && Catch::Contains("lane 16"));
  const auto without_caller = [](float* values) { values[threadIdx.x] = __shfl_sync(0x1u, 2.0f, 0); };
  CHECK_THROWS_WITH(emulator::launch({1, 32}, without_caller, out), Catch::Contains("leaves out the calling lane"));
  const auto outside_mask = [](float* values) {
    const unsigned int lane = threadIdx.x % 32;
    values[lane] = __shfl_sync(lane < 16 ? 0x0000ffffu : 0xffff0000u, 3.0f, 0);
  };
  CHECK_THROWS_WITH(emulator::launch({1, 32}, outside_mask, out), Catch::Contains("outside its mask"));
  // Groups of 8 lanes shuffle among themselves (as the SpMM's row groups do); the last group
  // returns at once while the others go on.
  const auto groups = [](float* values) {
    const unsigned int lane = threadIdx.x % 32, first = lane & ~7u;
    if (first == 24) return;
    float x = static_cast<float>(lane);
    for (int offset = 4; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffu << first, x, offset);
    values[lane] = x;
  };
  std::vector<float> sums(32, -1.0f);
  emulator::launch({1, 32}, groups, sums.data());
  for (unsigned int lane = 0; lane < 32; ++lane)
    CHECK(sums[lane] == (lane < 24 ? static_cast<float>(28 + 64 * (lane / 8)) : -1.0f));
  // Converged code runs: a butterfly sum gives every lane the warp's total.
  const auto butterfly = [](float* values) {
    float x = static_cast<float>(threadIdx.x % 32);
    for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
    values[threadIdx.x + 32 * blockIdx.x] = x;
  };
  emulator::launch({2, 32}, butterfly, out);
  for (float v : out) CHECK(v == 496.0f);
  // A lane reads its neighbour's slot of shared memory: without a __syncwarp after the writes (a
  // race on a GPU) what it reads depends on the order the lanes run in; with one it does not.
  const auto neighbour = [](float* values, bool synchronised) {
    __shared__ float slot[32];
    const unsigned int lane = threadIdx.x % 32;
    slot[lane] = static_cast<float>(lane) + 100.0f * static_cast<float>(blockIdx.x);
    if (synchronised) __syncwarp();
    values[lane] = slot[(lane + 1) % 32];
    __syncwarp();
    slot[lane] = -1.0f;  // what a later launch reads where it reads too early
  };
  std::vector<float> forward(32), reversed(32);
  emulator::launch({1, 32, false}, neighbour, forward.data(), false);
  emulator::launch({1, 32, true}, neighbour, reversed.data(), false);
  CHECK(forward != reversed);
  emulator::launch({1, 32, false}, neighbour, forward.data(), true);
  emulator::launch({1, 32, true}, neighbour, reversed.data(), true);
  CHECK(forward == reversed);
  for (unsigned int lane = 0; lane < 32; ++lane) CHECK(forward[lane] == static_cast<float>((lane + 1) % 32));
}
