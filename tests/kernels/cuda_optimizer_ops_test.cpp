// GPU tests of kernels/cuda/optimizer_ops.cu against the CPU twin: Adam, AdamW, sparse per-row
// Adam and SGD with momentum / Nesterov over several steps.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/random.hpp"
#include "kernels/optimizer_ops.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {
constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();
}

TEST_CASE("Adam, AdamW, per-row Adam and SGD on a GPU follow the CPU twins step by step", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(122, 0);
  const std::int64_t rows = 300, cols = 17;
  const Tensor p0 = test::random_tensor(rng, rows, cols);
  for (const bool decoupled : {false, true}) {
    CAPTURE(decoupled);
    AdamHyper h;
    h.lr = 0.01f;
    h.weight_decay = 0.05f;
    h.decoupled = decoupled;
    Tensor p = p0.clone(), m = Tensor::zeros(rows, cols), v = Tensor::zeros(rows, cols);
    Tensor pg = test::on_gpu(p0), mg = Tensor::zeros(rows, cols, Device::cuda()),
           vg = Tensor::zeros(rows, cols, Device::cuda());
    for (std::int64_t step = 1; step <= 5; ++step) {
      const Tensor g = test::random_tensor(rng, rows, cols);
      adam_step(p.view(), g.view(), m.view(), v.view(), h, step);
      adam_step(pg.view(), test::on_gpu(g).view(), mg.view(), vg.view(), h, step);
    }
    CHECK(test::difference(test::on_host(pg).view(), test::to_dense(p.view()), 1e-5, 1e-6) == "");
    CHECK(test::difference(test::on_host(vg).view(), test::to_dense(v.view()), 1e-5, 1e-9) == "");
  }
  {
    AdamHyper h;
    h.lr = 0.05f;
    Tensor p = p0.clone(), m = Tensor::zeros(rows, cols), v = Tensor::zeros(rows, cols);
    Tensor pg = test::on_gpu(p0), mg = Tensor::zeros(rows, cols, Device::cuda()),
           vg = Tensor::zeros(rows, cols, Device::cuda());
    const std::vector<std::int64_t> picked{5, 0, 299, 42};
    const std::vector<std::int64_t> steps{1, 3, 2, 7};
    const Tensor g = test::random_tensor(rng, rows, cols);
    adam_step_rows(p.view(), g.view(), m.view(), v.view(), {picked.data(), 4}, steps.data(), h);
    adam_step_rows(pg.view(), test::on_gpu(g).view(), mg.view(), vg.view(), {picked.data(), 4}, steps.data(), h);
    CHECK(test::difference(test::on_host(pg).view(), test::to_dense(p.view()), 1e-5, 1e-6) == "");
    CHECK(test::identical(test::on_host(pg).view().slice_rows(1, 5), p0.view().slice_rows(1, 5)));
  }
  for (const bool nesterov : {false, true}) {
    CAPTURE(nesterov);
    SgdHyper h;
    h.lr = 0.1f;
    h.momentum = 0.9f;
    h.weight_decay = 0.01f;
    h.nesterov = nesterov;
    Tensor p = p0.clone(), buf = test::poisoned(rows, cols);
    Tensor pg = test::on_gpu(p0), bufg = Tensor::full(rows, cols, nan_value, Device::cuda());
    for (std::int64_t step = 1; step <= 4; ++step) {
      const Tensor g = test::random_tensor(rng, rows, cols);
      sgd_step(p.view(), g.view(), buf.view(), h, step);
      sgd_step(pg.view(), test::on_gpu(g).view(), bufg.view(), h, step);
    }
    CHECK(test::difference(test::on_host(pg).view(), test::to_dense(p.view()), 1e-5, 1e-6) == "");
  }
}
