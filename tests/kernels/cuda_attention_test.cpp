// GPU tests of kernels/cuda/attention.cu and the ELU kernels against their CPU twins: attention
// forward and backward (with and without dropout, both index widths, dropout keyed on global ids,
// 1 to 12 heads, heads wider than a column pass, a hub row and a hub column longer than a chunk of
// a long row, empty rows), the per-head scores and their backward, ELU forward and backward; the
// same bits on every run; no read of what a dropped entry's head would have gathered.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "kernels/attention.hpp"
#include "kernels/device_index.hpp"
#include "kernels/elementwise.hpp"
#include "tests/kernels/attention_graphs.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

// The five outputs of a forward and backward, on the device of the operands.
struct Outputs {
  Tensor out, row_max, row_sum, grad_h, grad_src, grad_dst;
};

// Views of the same six outputs.
struct OutputViews {
  TensorView out, row_max, row_sum, grad_h, grad_src, grad_dst;
};

// Forward and backward into o, on `device` (where the operands and o are). With dst_ids and
// src_ids non-empty, the dropout draws are keyed on them (a rank's rows and columns as the whole
// graph's).
void run_into(const graph::CsrGraph& host_a, const graph::CsrGraph& host_at, ConstTensorView h, ConstTensorView src,
              ConstTensorView dst, ConstTensorView g, const AttentionSpec& spec,
              const std::vector<std::int64_t>& dst_ids, const std::vector<std::int64_t>& src_ids, Device device,
              const OutputViews& o) {
  const test::KeyedIds keyed(dst_ids, src_ids, device);
  const AttentionIds ids = keyed.ids();
  const auto go = [&](const auto& a, const auto& at) {
    attention_forward(a, h, src, dst, spec, ids, o.out, o.row_max, o.row_sum);
    attention_backward(a, at, h, src, dst, spec, ids, o.row_max, o.row_sum, g, o.grad_h, o.grad_src, o.grad_dst);
  };
  test::with_csr_pair(host_a, host_at, device, go);
}

// run_into on new outputs of a square A, the draws keyed on `global` for its rows and columns
// alike.
Outputs run(const graph::CsrGraph& host_a, const graph::CsrGraph& host_at, const Tensor& h, const Tensor& src,
            const Tensor& dst, const Tensor& g, const AttentionSpec& spec, const std::vector<std::int64_t>& global,
            Device device) {
  const std::int64_t n = host_a.num_rows(), c = h.cols(), heads = spec.heads;
  Outputs o{Tensor::empty(n, c, device), Tensor::empty(n, heads, device), Tensor::empty(n, heads, device),
            Tensor::empty(n, c, device), Tensor::empty(n, heads, device), Tensor::empty(n, heads, device)};
  run_into(host_a, host_at, h.view(), src.view(), dst.view(), g.view(), spec, global, global, device,
           {o.out.view(), o.row_max.view(), o.row_sum.view(), o.grad_h.view(), o.grad_src.view(), o.grad_dst.view()});
  return o;
}

// The operands of a test case on the host: 800 rows, a hub of 1200 entries (chunks of 512, 512 and
// 176 on the GPU) and every row with entries pointing at vertex 5 first (a row of Aᵀ of about 640,
// two chunks); h and g of heads x width columns, the per-head scores; with 64-bit indices, the
// global ids past 2^32 the draws are keyed on, as a rank of a large graph keys them.
struct Operands {
  graph::CsrGraph a, at;
  Tensor h, src, dst, g;
  std::vector<std::int64_t> global;
};

Operands operands(std::uint64_t seed, bool wide, std::int64_t heads, std::int64_t width) {
  const std::int64_t n = 800;
  Operands o;
  o.a = test::hub_graph(seed, n, 3, 1200, wide, 5);
  o.at = graph::transpose(o.a);
  RandomStream rng(seed + 1, 0);
  o.h = test::random_tensor(rng, n, heads * width);
  o.src = test::random_tensor(rng, n, heads, -2.0, 2.0);
  o.dst = test::random_tensor(rng, n, heads, -2.0, 2.0);
  o.g = test::random_tensor(rng, n, heads * width);
  for (std::int64_t i = 0; wide && i < n; ++i) o.global.push_back((std::int64_t{1} << 40) + 7919 * i);
  return o;
}

// A block of 800 destinations by 500 sources (a hub row of 1200 entries and source 5's row of Aᵀ of
// about 640, each longer than a chunk), with dropout 0.6: 32-bit indices with 12 heads of 9 (two
// blocks of draws), 64-bit ones with 3 heads of 129 (a head's columns in two passes) keyed on ids
// past 2^32. Run on `device` with every operand and output a window of 3 columns more, and on the
// CPU packed; equal within rounding, and nothing written past an output's window.
void check_strided_block(bool wide, Device device) {
  const std::int64_t rows = 800, cols = 500, heads = wide ? 3 : 12, c = heads * (wide ? 129 : 9);
  const graph::CsrGraph a = test::hub_block(37, rows, cols, 3, 1200, wide, 5), at = graph::transpose(a);
  RandomStream rng(38, 0);
  const Tensor h = test::random_tensor(rng, cols, c), src = test::random_tensor(rng, cols, heads, -2.0, 2.0),
               dst = test::random_tensor(rng, rows, heads, -2.0, 2.0), g = test::random_tensor(rng, rows, c);
  const std::vector<std::int64_t> dst_ids = wide ? test::far_ids(rows, false) : std::vector<std::int64_t>{},
                                  src_ids = wide ? test::far_ids(cols, true) : std::vector<std::int64_t>{};
  const AttentionSpec spec{heads, 0.2f, 0.6f, {4, 5, 6}};
  Outputs cpu{test::poisoned(rows, c), test::poisoned(rows, heads), test::poisoned(rows, heads),
              test::poisoned(cols, c), test::poisoned(cols, heads), test::poisoned(rows, heads)};
  run_into(a, at, h.view(), src.view(), dst.view(), g.view(), spec, dst_ids, src_ids, Device::cpu(),
           {cpu.out.view(), cpu.row_max.view(), cpu.row_sum.view(), cpu.grad_h.view(), cpu.grad_src.view(),
            cpu.grad_dst.view()});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto operand = [&](const Tensor& x) { return test::GpuStrided(x, 3, 1e30f, device); };
  const auto output = [&](std::int64_t r, std::int64_t w) { return test::GpuStrided(r, w, 3, nan, device); };
  const test::GpuStrided hs = operand(h), srcs = operand(src), dsts = operand(dst), gs = operand(g);
  const test::GpuStrided out = output(rows, c), row_max = output(rows, heads), row_sum = output(rows, heads),
                         grad_h = output(cols, c), grad_src = output(cols, heads), grad_dst = output(rows, heads);
  run_into(a, at, hs.view, srcs.view, dsts.view, gs.view, spec, dst_ids, src_ids, device,
           {out.view, row_max.view, row_sum.view, grad_h.view, grad_src.view, grad_dst.view});
  CHECK(test::difference(out.window().view(), test::to_dense(cpu.out.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(row_max.window().view(), test::to_dense(cpu.row_max.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(row_sum.window().view(), test::to_dense(cpu.row_sum.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(grad_h.window().view(), test::to_dense(cpu.grad_h.view()), 1e-4, 1e-4) == "");
  CHECK(test::difference(grad_src.window().view(), test::to_dense(cpu.grad_src.view()), 1e-3, 1e-4) == "");
  CHECK(test::difference(grad_dst.window().view(), test::to_dense(cpu.grad_dst.view()), 1e-3, 1e-4) == "");
  for (const test::GpuStrided* o : {&out, &row_max, &row_sum, &grad_h, &grad_src, &grad_dst})
    CHECK(o->padding_intact(nan));
}

}  // namespace

TEST_CASE("attention forward and backward on a GPU equal the CPU twin's within rounding, and repeat bitwise",
          "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const bool wide = GENERATE(false, true);
  const float p = GENERATE(0.0f, 0.6f);
  // Heads in blocks of 8 (one dropout draw per entry and block): one block, part of one, one and
  // a part; head widths below and past the warp, and past the 128 columns of one pass (a head's
  // columns in two pieces).
  const std::int64_t heads = GENERATE(1, 3, 8, 12);
  const std::int64_t width = GENERATE(7, 40, 129);
  CAPTURE(wide, p, heads, width);
  const auto [a, at, h, src, dst, g, global] = operands(17, wide, heads, width);
  const AttentionSpec spec{heads, 0.2f, p, {4, 5, 6}};
  const Outputs cpu = run(a, at, h, src, dst, g, spec, global, Device::cpu());
  const Device d = Device::cuda();
  const Outputs gpu =
      run(a, at, test::on_gpu(h), test::on_gpu(src), test::on_gpu(dst), test::on_gpu(g), spec, global, d);
  CHECK(test::difference(test::on_host(gpu.out).view(), test::to_dense(cpu.out.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(test::on_host(gpu.row_max).view(), test::to_dense(cpu.row_max.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(test::on_host(gpu.row_sum).view(), test::to_dense(cpu.row_sum.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(test::on_host(gpu.grad_h).view(), test::to_dense(cpu.grad_h.view()), 1e-4, 1e-4) == "");
  CHECK(test::difference(test::on_host(gpu.grad_src).view(), test::to_dense(cpu.grad_src.view()), 1e-3, 1e-4) == "");
  CHECK(test::difference(test::on_host(gpu.grad_dst).view(), test::to_dense(cpu.grad_dst.view()), 1e-3, 1e-4) == "");
  const Outputs again =
      run(a, at, test::on_gpu(h), test::on_gpu(src), test::on_gpu(dst), test::on_gpu(g), spec, global, d);
  CHECK(test::identical(test::on_host(again.out).view(), test::on_host(gpu.out).view()));
  CHECK(test::identical(test::on_host(again.grad_h).view(), test::on_host(gpu.grad_h).view()));
}

TEST_CASE("attention on a GPU reads no row slice of an entry's head that the dropout drops", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const bool wide = GENERATE(false, true);
  CAPTURE(wide);
  const std::int64_t heads = 12, width = 9;
  const auto [a, at, h, src, dst, g, global] = operands(27, wide, heads, width);
  const AttentionSpec spec{heads, 0.2f, 0.6f, {4, 5, 6}};
  std::int64_t poisoned = 0;
  const Tensor h_nan = test::nan_in_dropped_slices(at, global, global, spec.key, spec.dropout, h, heads, poisoned);
  REQUIRE(poisoned >= 100);
  const Device d = Device::cuda();
  const Outputs clean =
      run(a, at, test::on_gpu(h), test::on_gpu(src), test::on_gpu(dst), test::on_gpu(g), spec, global, d);
  const Outputs unread =
      run(a, at, test::on_gpu(h_nan), test::on_gpu(src), test::on_gpu(dst), test::on_gpu(g), spec, global, d);
  CHECK(test::identical(test::on_host(unread.out).view(), test::on_host(clean.out).view()));
  CHECK(test::identical(test::on_host(unread.grad_h).view(), test::on_host(clean.grad_h).view()));
  CHECK(test::identical(test::on_host(unread.grad_src).view(), test::on_host(clean.grad_src).view()));
  CHECK(test::identical(test::on_host(unread.grad_dst).view(), test::on_host(clean.grad_dst).view()));
}

// Small enough for compute-sanitizer's racecheck and synccheck, which tools/device-check.sh runs it
// under.
TEST_CASE("attention on a GPU over fewer sources than destinations and strided views equals the CPU twin's",
          "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const bool wide = GENERATE(false, true);
  CAPTURE(wide);
  check_strided_block(wide, Device::cuda());
}

// The case above on the CPU: the CPU twin on strided windows of a rectangular block against its
// packed run (and the check of that case's own set-up on machines without a GPU).
TEST_CASE("attention on the CPU over fewer sources than destinations and strided views equals its packed run",
          "[kernels]") {
  const bool wide = GENERATE(false, true);
  CAPTURE(wide);
  check_strided_block(wide, Device::cpu());
}

TEST_CASE("head_scores, its backward and ELU on a GPU equal their CPU twins", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(19, 0);
  const Tensor h = test::random_tensor(rng, 2000, 24);
  const Tensor a = test::random_tensor(rng, 3, 8);
  const Tensor g = test::random_tensor(rng, 2000, 3);
  Tensor cpu_s = test::poisoned(2000, 3);
  head_scores(h.view(), a.view(), cpu_s.view());
  Tensor gpu_s = Tensor::empty(2000, 3, Device::cuda());
  head_scores(test::on_gpu(h).view(), test::on_gpu(a).view(), gpu_s.view());
  CHECK(test::difference(test::on_host(gpu_s).view(), test::to_dense(cpu_s.view()), 1e-5, 1e-6) == "");
  Tensor cpu_gh = h.clone(), cpu_ga = a.clone();
  head_scores_backward(h.view(), a.view(), g.view(), cpu_gh.view(), cpu_ga.view());
  Tensor gpu_gh = test::on_gpu(h), gpu_ga = test::on_gpu(a);
  head_scores_backward(test::on_gpu(h).view(), test::on_gpu(a).view(), test::on_gpu(g).view(), gpu_gh.view(),
                       gpu_ga.view());
  CHECK(test::difference(test::on_host(gpu_gh).view(), test::to_dense(cpu_gh.view()), 1e-5, 1e-6) == "");
  CHECK(test::difference(test::on_host(gpu_ga).view(), test::to_dense(cpu_ga.view()), 1e-5, 1e-5) == "");

  Tensor cpu_y = test::poisoned(2000, 24);
  elu_forward(h.view(), cpu_y.view());
  Tensor gpu_y = Tensor::empty(2000, 24, Device::cuda());
  elu_forward(test::on_gpu(h).view(), gpu_y.view());
  CHECK(test::difference(test::on_host(gpu_y).view(), test::to_dense(cpu_y.view()), 1e-6, 1e-7) == "");
  Tensor cpu_gx = test::poisoned(2000, 24);
  elu_backward(cpu_y.view(), h.view(), cpu_gx.view());
  Tensor gpu_gx = Tensor::empty(2000, 24, Device::cuda());
  elu_backward(gpu_y.view(), test::on_gpu(h).view(), gpu_gx.view());
  CHECK(test::difference(test::on_host(gpu_gx).view(), test::to_dense(cpu_gx.view()), 1e-6, 1e-7) == "");
}
