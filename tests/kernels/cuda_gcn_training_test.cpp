// GPU test of the kernels working together: a 2-layer GCN (Â·H·W + b, ReLU, dropout, NLL on a
// training subset, hand-written backward, Adam) trained for a few epochs with every kernel on the
// GPU follows the very same training on the CPU: losses equal to 1e-4, weights close. The dropout
// masks are the same bits on both devices, so the two runs compute the same function.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/dropout.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "kernels/loss.hpp"
#include "kernels/optimizer_ops.hpp"
#include "kernels/spmm.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

// A random symmetric graph without self loops: n vertices, about n * degree / 2 undirected edges,
// plus a hub joined to a quarter of the vertices.
graph::CsrGraph random_symmetric_graph(std::int64_t n, std::int64_t degree, std::uint64_t seed) {
  RandomStream rng(seed, 0);
  std::vector<std::vector<std::int32_t>> adjacency(static_cast<std::size_t>(n));
  const auto join = [&](std::int64_t a, std::int64_t b) {
    if (a == b) return;
    adjacency[static_cast<std::size_t>(a)].push_back(static_cast<std::int32_t>(b));
    adjacency[static_cast<std::size_t>(b)].push_back(static_cast<std::int32_t>(a));
  };
  for (std::int64_t e = 0; e < n * degree / 2; ++e)
    join(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n))),
         static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n))));
  for (std::int64_t v = 1; v < n; v += 4) join(0, v);
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  for (auto& row : adjacency) {
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    indices.insert(indices.end(), row.begin(), row.end());
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  graph::CsrProperties properties;
  properties.sorted = true;
  properties.symmetric = true;
  return graph::CsrGraph(n, n, Array<std::int64_t>::from_vector(indptr), Array<std::int32_t>::from_vector(indices),
                         Array<float>{}, properties);
}

struct Problem {
  graph::CsrGraph a;  // Â, symmetric
  Tensor features;    // host
  std::vector<std::int64_t> labels;
  std::vector<std::int64_t> train;
  std::int64_t classes = 5;
  std::int64_t hidden = 16;
};

struct Trained {
  std::vector<double> losses;
  std::vector<Tensor> weights;  // host copies of W0, b0, W1, b1 after training
};

// Trains on `device` (the graph is uploaded as a DeviceCsr on a GPU). Layer 0 aggregates first
// ((Â·X)·W0), layer 1 transforms first (Â·(H·W1)), so both orders of the backward are covered.
Trained train_gcn(const Problem& p, Device device, int epochs) {
  const std::int64_t n = p.a.num_rows();
  kernels::cuda::DeviceCsr a_gpu;
  if (device.is_cuda()) a_gpu = kernels::cuda::DeviceCsr(p.a, device);
  const auto aggregate = [&](const Tensor& x, Tensor& out) {
    if (device.is_cuda())
      a_gpu.visit([&](const auto& v) { spmm(v, x.view(), out.view()); });
    else
      spmm(p.a, x.view(), out.view());
  };
  const Tensor x = p.features.to(device);
  const std::int64_t f = x.cols();
  RandomStream rng(5, 0);
  const Tensor w0_host = test::random_tensor(rng, f, p.hidden, -0.3, 0.3);
  const Tensor w1_host = test::random_tensor(rng, p.hidden, p.classes, -0.3, 0.3);
  Tensor w0 = w0_host.to(device), b0 = Tensor::zeros(1, p.hidden, device);
  Tensor w1 = w1_host.to(device), b1 = Tensor::zeros(1, p.classes, device);
  std::vector<Tensor*> params{&w0, &b0, &w1, &b1};
  std::vector<Tensor> grads, m, v;
  for (Tensor* t : params) {
    grads.push_back(Tensor::zeros(t->rows(), t->cols(), device));
    m.push_back(Tensor::zeros(t->rows(), t->cols(), device));
    v.push_back(Tensor::zeros(t->rows(), t->cols(), device));
  }
  AdamHyper adam;
  adam.lr = 0.02f;
  adam.weight_decay = 5e-4f;
  const float p_drop = 0.5f;
  Trained result;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const DropoutKey key{11, static_cast<std::uint64_t>(epoch), 0};
    // Layer 0: T0 = Â·X, Z0 = T0·W0 + b0, H = dropout(relu(Z0)).
    Tensor t0 = Tensor::empty(n, f, device), z0 = Tensor::empty(n, p.hidden, device);
    aggregate(x, t0);
    gemm(t0.view(), Transpose::no, w0.view(), Transpose::no, z0.view());
    add_bias(z0.view(), b0.view());
    relu_forward(z0.view(), z0.view());
    Tensor h = Tensor::empty(n, p.hidden, device);
    dropout_forward(z0.view(), h.view(), p_drop, key, {});
    // Layer 1: T1 = H·W1, Z1 = Â·T1 + b1.
    Tensor t1 = Tensor::empty(n, p.classes, device), z1 = Tensor::empty(n, p.classes, device);
    gemm(h.view(), Transpose::no, w1.view(), Transpose::no, t1.view());
    aggregate(t1, z1);
    add_bias(z1.view(), b1.view());
    Tensor g1 = Tensor::empty(n, p.classes, device);
    const LossSum loss =
        log_softmax_nll(z1.view(), p.labels.data(), {p.train.data(), static_cast<std::int64_t>(p.train.size())},
                        1.0f / static_cast<float>(p.train.size()), g1.view());
    result.losses.push_back(loss.loss_sum / static_cast<double>(loss.count));
    // Backward of layer 1 (Â symmetric: Âᵀ = Â).
    column_sums(g1.view(), grads[3].view());
    Tensor gt1 = Tensor::empty(n, p.classes, device);
    aggregate(g1, gt1);
    gemm(h.view(), Transpose::yes, gt1.view(), Transpose::no, grads[2].view());
    Tensor gh = Tensor::empty(n, p.hidden, device);
    gemm(gt1.view(), Transpose::no, w1.view(), Transpose::yes, gh.view());
    // Through dropout and ReLU, then layer 0.
    dropout_backward(gh.view(), gh.view(), p_drop, key, {});
    relu_backward(z0.view(), gh.view(), gh.view());
    column_sums(gh.view(), grads[1].view());
    gemm(t0.view(), Transpose::yes, gh.view(), Transpose::no, grads[0].view());
    for (std::size_t i = 0; i < params.size(); ++i)
      adam_step(params[i]->view(), grads[i].view(), m[i].view(), v[i].view(), adam, epoch + 1);
  }
  for (Tensor* t : params) result.weights.push_back(t->to(Device::cpu()));
  return result;
}

}  // namespace

TEST_CASE("a GCN trained with every kernel on the GPU follows the CPU's losses to 1e-4", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  Problem p;
  p.a = graph::gcn_normalize(random_symmetric_graph(3000, 8, 31));
  REQUIRE(p.a.properties().symmetric);
  RandomStream rng(32, 0);
  p.features = test::random_tensor(rng, 3000, 24);
  // Learnable labels: the largest of a vertex's first `classes` features.
  for (std::int64_t v = 0; v < 3000; ++v) {
    const float* row = p.features.data() + v * 24;
    p.labels.push_back(std::max_element(row, row + p.classes) - row);
    if (v % 3 == 0) p.train.push_back(v);
  }
  const Trained cpu = train_gcn(p, Device::cpu(), 8);
  const Trained gpu = train_gcn(p, Device::cuda(), 8);
  REQUIRE(gpu.losses.size() == cpu.losses.size());
  for (std::size_t e = 0; e < cpu.losses.size(); ++e) {
    CAPTURE(e, cpu.losses[e], gpu.losses[e]);
    CHECK(std::fabs(gpu.losses[e] - cpu.losses[e]) <= 1e-4);
  }
  CHECK(cpu.losses.back() < cpu.losses.front());  // it trains
  for (std::size_t i = 0; i < cpu.weights.size(); ++i) {
    CAPTURE(i);
    CHECK(test::difference(gpu.weights[i].view(), test::to_dense(cpu.weights[i].view()), 1e-3, 1e-4) == "");
  }
}
