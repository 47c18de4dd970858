// GPU tests of kernels/cuda/dot_attention.cu against its CPU twin: forward and backward with and
// without dropout, both index widths, dropout keyed on global ids, 1 to 12 heads, a hub row and a
// hub column longer than a chunk of a long row, empty rows, key and value widths that differ
// (below 8, past a warp, past one pass of columns); the same bits on every run.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "kernels/device_index.hpp"
#include "kernels/dot_attention.hpp"
#include "tests/kernels/attention_graphs.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

struct Outputs {
  Tensor out, row_max, row_sum, grad_q, grad_k, grad_v;
};

// Views of the same six outputs.
struct OutputViews {
  TensorView out, row_max, row_sum, grad_q, grad_k, grad_v;
};

// Forward and backward into o, on `device` (where the operands and o are). With dst_ids and
// src_ids non-empty, the dropout draws are keyed on them (a rank's rows and columns as the whole
// graph's).
void run_into(const graph::CsrGraph& host_a, const graph::CsrGraph& host_at, ConstTensorView q, ConstTensorView k,
              ConstTensorView v, ConstTensorView g, const DotAttentionSpec& spec,
              const std::vector<std::int64_t>& dst_ids, const std::vector<std::int64_t>& src_ids, Device device,
              const OutputViews& o) {
  const test::KeyedIds keyed(dst_ids, src_ids, device);
  const AttentionIds ids = keyed.ids();
  const auto go = [&](const auto& a, const auto& at) {
    dot_attention_forward(a, q, k, v, spec, ids, o.out, o.row_max, o.row_sum);
    dot_attention_backward(a, at, q, k, v, spec, ids, o.row_max, o.row_sum, g, o.grad_q, o.grad_k, o.grad_v);
  };
  test::with_csr_pair(host_a, host_at, device, go);
}

// run_into on new outputs of a square A, the draws keyed on `global` for its rows and columns
// alike.
Outputs run(const graph::CsrGraph& host_a, const graph::CsrGraph& host_at, const Tensor& q, const Tensor& k,
            const Tensor& v, const Tensor& g, const DotAttentionSpec& spec, const std::vector<std::int64_t>& global,
            Device device) {
  const std::int64_t n = host_a.num_rows(), heads = spec.heads;
  Outputs o{Tensor::empty(n, v.cols(), device), Tensor::empty(n, heads, device),    Tensor::empty(n, heads, device),
            Tensor::empty(n, q.cols(), device), Tensor::empty(n, k.cols(), device), Tensor::empty(n, v.cols(), device)};
  run_into(host_a, host_at, q.view(), k.view(), v.view(), g.view(), spec, global, global, device,
           {o.out.view(), o.row_max.view(), o.row_sum.view(), o.grad_q.view(), o.grad_k.view(), o.grad_v.view()});
  return o;
}

// A block of 800 destinations by 500 sources (a hub row of 1200 entries and source 5's row of Aᵀ of
// about 640, each longer than a chunk), with dropout 0.6: 32-bit indices with 12 heads, keys 5 and
// values 9 wide, 64-bit ones with 3 heads, keys 130 and values 129 wide (a head's columns in two
// passes), keyed on ids past 2^32. Run on `device` with every operand and output a window of 3
// columns more, and on the CPU packed; equal within rounding, nothing written past an output's
// window.
void check_strided_block(bool wide, Device device) {
  const std::int64_t rows = 800, cols = 500, heads = wide ? 3 : 12;
  const std::int64_t cq = heads * (wide ? 130 : 5), cv = heads * (wide ? 129 : 9);
  const graph::CsrGraph a = test::hub_block(47, rows, cols, 3, 1200, wide, 5), at = graph::transpose(a);
  RandomStream rng(48, 0);
  const Tensor q = test::random_tensor(rng, rows, cq), k = test::random_tensor(rng, cols, cq),
               v = test::random_tensor(rng, cols, cv), g = test::random_tensor(rng, rows, cv);
  const std::vector<std::int64_t> dst_ids = wide ? test::far_ids(rows, false) : std::vector<std::int64_t>{},
                                  src_ids = wide ? test::far_ids(cols, true) : std::vector<std::int64_t>{};
  const DotAttentionSpec spec{heads, 0.6f, {4, 5, 6}};
  Outputs cpu{test::poisoned(rows, cv), test::poisoned(rows, heads), test::poisoned(rows, heads),
              test::poisoned(rows, cq), test::poisoned(cols, cq),    test::poisoned(cols, cv)};
  run_into(a, at, q.view(), k.view(), v.view(), g.view(), spec, dst_ids, src_ids, Device::cpu(),
           {cpu.out.view(), cpu.row_max.view(), cpu.row_sum.view(), cpu.grad_q.view(), cpu.grad_k.view(),
            cpu.grad_v.view()});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto operand = [&](const Tensor& x) { return test::GpuStrided(x, 3, 1e30f, device); };
  const auto output = [&](std::int64_t r, std::int64_t w) { return test::GpuStrided(r, w, 3, nan, device); };
  const test::GpuStrided qs = operand(q), ks = operand(k), vs = operand(v), gs = operand(g);
  const test::GpuStrided out = output(rows, cv), row_max = output(rows, heads), row_sum = output(rows, heads),
                         grad_q = output(rows, cq), grad_k = output(cols, cq), grad_v = output(cols, cv);
  run_into(a, at, qs.view, ks.view, vs.view, gs.view, spec, dst_ids, src_ids, device,
           {out.view, row_max.view, row_sum.view, grad_q.view, grad_k.view, grad_v.view});
  CHECK(test::difference(out.window().view(), test::to_dense(cpu.out.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(row_max.window().view(), test::to_dense(cpu.row_max.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(row_sum.window().view(), test::to_dense(cpu.row_sum.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(grad_q.window().view(), test::to_dense(cpu.grad_q.view()), 1e-3, 1e-4) == "");
  CHECK(test::difference(grad_k.window().view(), test::to_dense(cpu.grad_k.view()), 1e-3, 1e-4) == "");
  CHECK(test::difference(grad_v.window().view(), test::to_dense(cpu.grad_v.view()), 1e-4, 1e-4) == "");
  for (const test::GpuStrided* o : {&out, &row_max, &row_sum, &grad_q, &grad_k, &grad_v}) CHECK(o->padding_intact(nan));
}

}  // namespace

TEST_CASE("dot-product attention on a GPU equals the CPU twin's within rounding, and repeats bitwise",
          "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const bool wide = GENERATE(false, true);
  const float p = GENERATE(0.0f, 0.6f);
  // Heads in blocks of 8 (one dropout draw per entry and block): one block, part of one, one and
  // a part.
  const std::int64_t heads = GENERATE(1, 3, 8, 12);
  // Key and value widths apart: one below 8 and one past a warp (33: no lane-serial dot ends on a
  // multiple of 4); 40 and 33 columns a head split a block's heads over several passes; 130 and 129
  // split one head's columns over two passes of 128.
  const int widths = GENERATE(0, 1, 2);
  const std::int64_t fk = widths == 0 ? 7 : widths == 1 ? 33 : 130, fv = widths == 0 ? 40 : widths == 1 ? 8 : 129;
  CAPTURE(wide, p, heads, fk, fv);
  // 800 rows: a hub of 1200 entries (chunks of 512, 512 and 176 on the GPU) and every row with
  // entries pointing at vertex 5 first (a row of Aᵀ of about 640, two chunks).
  const std::int64_t n = 800;
  const graph::CsrGraph a = test::hub_graph(27, n, 3, 1200, wide, 5);
  const graph::CsrGraph at = graph::transpose(a);
  RandomStream rng(28, 0);
  const Tensor q = test::random_tensor(rng, n, heads * fk);
  const Tensor k = test::random_tensor(rng, n, heads * fk);
  const Tensor v = test::random_tensor(rng, n, heads * fv);
  const Tensor g = test::random_tensor(rng, n, heads * fv);
  const DotAttentionSpec spec{heads, p, {4, 5, 6}};
  // With 64-bit indices the draws are keyed on ids past 2^32, as a rank of a large graph keys them.
  std::vector<std::int64_t> global;
  for (std::int64_t i = 0; wide && i < n; ++i) global.push_back((std::int64_t{1} << 40) + 7919 * i);
  const Outputs cpu = run(a, at, q, k, v, g, spec, global, Device::cpu());
  const Device d = Device::cuda();
  const Outputs gpu = run(a, at, test::on_gpu(q), test::on_gpu(k), test::on_gpu(v), test::on_gpu(g), spec, global, d);
  CHECK(test::difference(test::on_host(gpu.out).view(), test::to_dense(cpu.out.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(test::on_host(gpu.row_max).view(), test::to_dense(cpu.row_max.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(test::on_host(gpu.row_sum).view(), test::to_dense(cpu.row_sum.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(test::on_host(gpu.grad_q).view(), test::to_dense(cpu.grad_q.view()), 1e-3, 1e-4) == "");
  CHECK(test::difference(test::on_host(gpu.grad_k).view(), test::to_dense(cpu.grad_k.view()), 1e-3, 1e-4) == "");
  CHECK(test::difference(test::on_host(gpu.grad_v).view(), test::to_dense(cpu.grad_v.view()), 1e-4, 1e-4) == "");
  const Outputs again = run(a, at, test::on_gpu(q), test::on_gpu(k), test::on_gpu(v), test::on_gpu(g), spec, global, d);
  CHECK(test::identical(test::on_host(again.out).view(), test::on_host(gpu.out).view()));
  CHECK(test::identical(test::on_host(again.grad_q).view(), test::on_host(gpu.grad_q).view()));
  CHECK(test::identical(test::on_host(again.grad_k).view(), test::on_host(gpu.grad_k).view()));
  CHECK(test::identical(test::on_host(again.grad_v).view(), test::on_host(gpu.grad_v).view()));
}

// Small enough for compute-sanitizer's racecheck and synccheck, which tools/device-check.sh runs it
// under.
TEST_CASE("dot-product attention on a GPU over fewer sources than destinations and strided views equals the CPU twin's",
          "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const bool wide = GENERATE(false, true);
  CAPTURE(wide);
  check_strided_block(wide, Device::cuda());
}

// The case above on the CPU: the CPU twin on strided windows of a rectangular block against its
// packed run (and the check of that case's own set-up on machines without a GPU).
TEST_CASE(
    "dot-product attention on the CPU over fewer sources than destinations and strided views equals its packed run",
    "[kernels]") {
  const bool wide = GENERATE(false, true);
  CAPTURE(wide);
  check_strided_block(wide, Device::cpu());
}
