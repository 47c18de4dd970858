// GPU tests of kernels/cuda/optimizer_ops.cu against the CPU twin: Adam, AdamW, sparse per-row
// Adam and SGD with momentum / Nesterov over several steps; the row-sparse Adam over SparseRows
// in device memory (touching by nonzero gradients, stepping, clearing, and step counts written
// through host_steps) against kernels/cpu/sparse_rows.cpp.
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

TEST_CASE("the row-sparse Adam on a GPU touches, steps and clears the rows its CPU twin does", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(123, 0);
  // 37 columns: a warp's lanes cover a row in two passes, the second partial.
  const std::int64_t rows = 500, cols = 37;
  for (const bool decoupled : {false, true}) {
    CAPTURE(decoupled);
    AdamHyper h;
    h.lr = 0.02f;
    h.beta2 = 0.99f;
    h.weight_decay = 0.05f;
    h.decoupled = decoupled;
    const Tensor p0 = test::random_tensor(rng, rows, cols);
    Tensor p = p0.clone(), g = Tensor::zeros(rows, cols), m = Tensor::zeros(rows, cols), v = Tensor::zeros(rows, cols);
    Tensor pg = test::on_gpu(p0), gg = Tensor::zeros(rows, cols, Device::cuda()),
           mg = Tensor::zeros(rows, cols, Device::cuda()), vg = Tensor::zeros(rows, cols, Device::cuda());
    SparseRows cpu(rows, Device::cpu()), gpu(rows, Device::cuda());
    for (int step = 0; step < 6; ++step) {
      CAPTURE(step);
      // A gradient on a random third of the rows (zero elsewhere), added twice; on step 3 the
      // pending gradients are dropped instead, and on step 4 the counts are rewritten through
      // host_steps as a checkpoint being loaded does.
      std::vector<float> values(static_cast<std::size_t>(rows * cols), 0.0f);
      for (std::int64_t r = 0; r < rows; ++r)
        if (rng.uniform() < 1.0 / 3)
          for (std::int64_t j = 0; j < cols; ++j)
            values[static_cast<std::size_t>(r * cols + j)] = static_cast<float>(2.0 * rng.uniform() - 1.0);
      const Tensor grad_all = Tensor::from_vector(rows, cols, values);
      const Tensor grad_all_gpu = test::on_gpu(grad_all);
      for (int twice = 0; twice < 2; ++twice) {
        accumulate_row_grad(grad_all.view(), g.view(), cpu);
        accumulate_row_grad(grad_all_gpu.view(), gg.view(), gpu);
      }
      CHECK(gpu.count_touched() == cpu.count_touched());
      CHECK(gpu.is_touched(7) == cpu.is_touched(7));
      CHECK(test::identical(test::on_host(gg).view(), g.view()));
      if (step == 3) {
        clear_touched(g.view(), cpu);
        clear_touched(gg.view(), gpu);
        CHECK(gpu.count_touched() == 0);
        continue;
      }
      if (step == 4) {
        Array<std::int64_t>& cpu_counts = cpu.host_steps();
        Array<std::int64_t>& gpu_counts = gpu.host_steps();
        CHECK(gpu_counts.to_vector() == cpu_counts.to_vector());
        for (std::int64_t r = 0; r < rows; r += 3) cpu_counts[r] = gpu_counts[r] = 10 + r % 7;
      }
      adam_step_touched(p.view(), g.view(), m.view(), v.view(), cpu, h);
      adam_step_touched(pg.view(), gg.view(), mg.view(), vg.view(), gpu, h);
      CHECK(gpu.count_touched() == 0);
    }
    CHECK(gpu.host_steps().to_vector() == cpu.host_steps().to_vector());
    CHECK(test::identical(test::on_host(gg).view(), g.view()));
    CHECK(test::difference(test::on_host(pg).view(), test::to_dense(p.view()), 1e-5, 1e-6) == "");
    CHECK(test::difference(test::on_host(mg).view(), test::to_dense(m.view()), 1e-5, 1e-7) == "");
    CHECK(test::difference(test::on_host(vg).view(), test::to_dense(v.view()), 1e-5, 1e-9) == "");
    // Rows never touched kept their values bit for bit.
    std::int64_t untouched = 0;
    const std::vector<std::int64_t> counts = cpu.host_steps().to_vector();
    for (std::int64_t r = 0; r < rows; ++r)
      if (counts[static_cast<std::size_t>(r)] == 0) {
        ++untouched;
        CHECK(test::identical(test::on_host(pg).view().slice_rows(r, r + 1), p0.view().slice_rows(r, r + 1)));
      }
    CHECK(untouched > 0);
  }
}

TEST_CASE("accumulate_row_grad of a chunk on a GPU adds and touches what its CPU twin does", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(57, 0);
  const Tensor start = test::random_tensor(rng, 40, 6);
  std::vector<float> values(13 * 6, 0.0f);
  for (std::size_t k = 0; k < values.size(); k += 4) values[k] = static_cast<float>(rng.uniform());
  const Tensor chunk = Tensor::from_vector(13, 6, values);
  Tensor cpu_grad = start.clone();
  Tensor gpu_grad = test::on_gpu(start);
  SparseRows cpu(40, Device::cpu());
  SparseRows gpu(40, Device::cuda());
  accumulate_row_grad(chunk.view(), cpu_grad.view(), cpu, 20);
  accumulate_row_grad(test::on_gpu(chunk).view(), gpu_grad.view(), gpu, 20);
  CHECK(test::identical(test::on_host(gpu_grad).view(), cpu_grad.view()));
  CHECK(gpu.count_touched() == cpu.count_touched());
  CHECK(cpu.count_touched() > 0);
  for (std::int64_t r = 0; r < 40; ++r) CHECK(gpu.is_touched(r) == cpu.is_touched(r));
}
