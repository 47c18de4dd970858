// GPU tests of kernels/cuda/dot_attention.cu against its CPU twin: forward and backward with and
// without dropout, both index widths, a hub row, empty rows, key and value widths that differ and
// exceed a warp; the same bits on every run.
#include <catch2/catch.hpp>
#include <cstdint>

#include "graph/base/random.hpp"
#include "graph/build.hpp"
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

Outputs run(const graph::CsrGraph& host_a, const graph::CsrGraph& host_at, const Tensor& q, const Tensor& k,
            const Tensor& v, const Tensor& g, const DotAttentionSpec& spec, Device device) {
  const std::int64_t n = host_a.num_rows(), heads = spec.heads;
  Outputs o{Tensor::empty(n, v.cols(), device), Tensor::empty(n, heads, device), Tensor::empty(n, heads, device),
            Tensor::empty(n, q.cols(), device), Tensor::empty(n, k.cols(), device), Tensor::empty(n, v.cols(), device)};
  const auto go = [&](const auto& a, const auto& at) {
    dot_attention_forward(a, q.view(), k.view(), v.view(), spec, {}, o.out.view(), o.row_max.view(), o.row_sum.view());
    dot_attention_backward(a, at, q.view(), k.view(), v.view(), spec, {}, o.row_max.view(), o.row_sum.view(), g.view(),
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
  const std::int64_t heads = GENERATE(1, 8);
  const std::int64_t fk = GENERATE(16, 40);
  const std::int64_t fv = GENERATE(8, 33);
  CAPTURE(wide, p, heads, fk, fv);
  const graph::CsrGraph a = test::hub_graph(27, 400, 3, 700, wide);
  const graph::CsrGraph at = graph::transpose(a);
  RandomStream rng(28, 0);
  const Tensor q = test::random_tensor(rng, 400, heads * fk);
  const Tensor k = test::random_tensor(rng, 400, heads * fk);
  const Tensor v = test::random_tensor(rng, 400, heads * fv);
  const Tensor g = test::random_tensor(rng, 400, heads * fv);
  const DotAttentionSpec spec{heads, p, {4, 5, 6}};
  const Outputs cpu = run(a, at, q, k, v, g, spec, Device::cpu());
  const Device d = Device::cuda();
  const Outputs gpu = run(a, at, test::on_gpu(q), test::on_gpu(k), test::on_gpu(v), test::on_gpu(g), spec, d);
  CHECK(test::difference(test::on_host(gpu.out).view(), test::to_dense(cpu.out.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(test::on_host(gpu.row_sum).view(), test::to_dense(cpu.row_sum.view()), 1e-4, 1e-5) == "");
  CHECK(test::difference(test::on_host(gpu.grad_q).view(), test::to_dense(cpu.grad_q.view()), 1e-3, 1e-4) == "");
  CHECK(test::difference(test::on_host(gpu.grad_k).view(), test::to_dense(cpu.grad_k.view()), 1e-3, 1e-4) == "");
  CHECK(test::difference(test::on_host(gpu.grad_v).view(), test::to_dense(cpu.grad_v.view()), 1e-4, 1e-4) == "");
  const Outputs again = run(a, at, test::on_gpu(q), test::on_gpu(k), test::on_gpu(v), test::on_gpu(g), spec, d);
  CHECK(test::identical(test::on_host(again.out).view(), test::on_host(gpu.out).view()));
  CHECK(test::identical(test::on_host(again.grad_k).view(), test::on_host(gpu.grad_k).view()));
}
