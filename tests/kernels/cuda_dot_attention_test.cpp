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

// With `global` non-empty, the dropout draws are keyed on those ids (a rank's rows as the whole
// graph's) for A's rows and columns alike.
Outputs run(const graph::CsrGraph& host_a, const graph::CsrGraph& host_at, const Tensor& q, const Tensor& k,
            const Tensor& v, const Tensor& g, const DotAttentionSpec& spec, const std::vector<std::int64_t>& global,
            Device device) {
  const std::int64_t n = host_a.num_rows(), heads = spec.heads;
  Outputs o{Tensor::empty(n, v.cols(), device), Tensor::empty(n, heads, device),    Tensor::empty(n, heads, device),
            Tensor::empty(n, q.cols(), device), Tensor::empty(n, k.cols(), device), Tensor::empty(n, v.cols(), device)};
  const DeviceIndex index(test::index_view(global), std::numeric_limits<std::int64_t>::max(), device, IndexUse::rows);
  const AttentionIds ids = global.empty() ? AttentionIds{} : AttentionIds{&index, &index};
  const auto go = [&](const auto& a, const auto& at) {
    dot_attention_forward(a, q.view(), k.view(), v.view(), spec, ids, o.out.view(), o.row_max.view(), o.row_sum.view());
    dot_attention_backward(a, at, q.view(), k.view(), v.view(), spec, ids, o.row_max.view(), o.row_sum.view(), g.view(),
                           o.grad_q.view(), o.grad_k.view(), o.grad_v.view());
  };
  test::with_csr_pair(host_a, host_at, device, go);
  return o;
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
