// GPU tests of kernels/cuda/loss.cu against the CPU twin: the summed NLL and its gradient (rows
// outside the mask zeroed over NaN), the accuracy count with ties and NaN logits resolved as the
// CPU resolves them, empty masks, and the same refusals as the CPU (bad rows, bad labels,
// repeated rows with a gradient).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "kernels/loss.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {
constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();
}

TEST_CASE("log_softmax_nll on a GPU matches the CPU twin's loss and gradient", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(111, 0);
  for (const std::int64_t classes : {1, 7, 47, 100}) {
    CAPTURE(classes);
    const std::int64_t rows = 5000;
    const Tensor logits = test::random_tensor(rng, rows, classes, -8.0, 8.0);
    std::vector<std::int64_t> labels(static_cast<std::size_t>(rows));
    for (auto& l : labels) l = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(classes)));
    std::vector<std::int64_t> mask;
    for (std::int64_t r = 0; r < rows; r += 3) mask.push_back(r);
    const IndexView m{mask.data(), static_cast<std::int64_t>(mask.size())};
    const float scale = 1.0f / static_cast<float>(mask.size());
    Tensor cpu_grad = test::poisoned(rows, classes);
    const LossSum cpu = log_softmax_nll(logits.view(), labels.data(), m, scale, cpu_grad.view());
    Tensor gpu_grad = Tensor::full(rows, classes, nan_value, Device::cuda());
    const Tensor lg = test::on_gpu(logits);
    const LossSum gpu = log_softmax_nll(lg.view(), labels.data(), m, scale, gpu_grad.view());
    CHECK(gpu.count == cpu.count);
    CHECK(gpu.loss_sum == Approx(cpu.loss_sum).epsilon(1e-10));
    CHECK(test::difference(test::on_host(gpu_grad).view(), test::to_dense(cpu_grad.view()), 1e-6, 1e-9) == "");
    // Without a gradient, the same loss; repeated rows are then allowed.
    std::vector<std::int64_t> twice = mask;
    twice.insert(twice.end(), mask.begin(), mask.end());
    const LossSum doubled = log_softmax_nll(
        lg.view(), labels.data(), {twice.data(), static_cast<std::int64_t>(twice.size())}, 1.0f, TensorView{});
    CHECK(doubled.loss_sum == Approx(2 * cpu.loss_sum).epsilon(1e-10));
  }
}

TEST_CASE("count_correct on a GPU counts as the CPU twin does, ties and NaN included", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(112, 0);
  const std::int64_t rows = 3000, classes = 40;
  Tensor logits = test::random_tensor(rng, rows, classes);
  // Ties (the lowest index wins), NaN first (argmax 0) and NaN later (skipped).
  for (std::int64_t r = 0; r < rows; r += 5) {
    float* z = logits.data() + r * classes;
    const auto a = static_cast<std::int64_t>(rng.below(classes));
    const auto b = static_cast<std::int64_t>(rng.below(classes));
    z[a] = z[b] = 3.0f;
    if (r % 15 == 0) z[0] = nan_value;
    if (r % 25 == 0) z[(a + 1) % classes] = nan_value;
  }
  std::vector<std::int64_t> labels(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    // Label the CPU's arg-max for half the rows, so the count is far from 0 and from all.
    const float* z = logits.data() + r * classes;
    std::int64_t best = 0;
    for (std::int64_t j = 1; j < classes; ++j)
      if (z[j] > z[best]) best = j;
    labels[static_cast<std::size_t>(r)] = r % 2 == 0 ? best : static_cast<std::int64_t>(rng.below(classes));
  }
  std::vector<std::int64_t> mask(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) mask[static_cast<std::size_t>(r)] = rows - 1 - r;
  const IndexView m{mask.data(), rows};
  const std::int64_t cpu = count_correct(logits.view(), labels.data(), m);
  CHECK(cpu > rows / 2);
  CHECK(count_correct(test::on_gpu(logits).view(), labels.data(), m) == cpu);
}

TEST_CASE("the GPU loss kernels handle empty masks and refuse what the CPU refuses", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const Tensor logits = Tensor::zeros(4, 3, Device::cuda());
  const std::vector<std::int64_t> labels{0, 1, 2, 5};
  Tensor grad = Tensor::full(4, 3, nan_value, Device::cuda());
  const LossSum none = log_softmax_nll(logits.view(), labels.data(), {}, 1.0f, grad.view());
  CHECK(none.count == 0);
  CHECK(none.loss_sum == 0.0);
  CHECK(grad.to_vector() == std::vector<float>(12, 0.0f));
  CHECK(count_correct(logits.view(), labels.data(), {}) == 0);
  const std::vector<std::int64_t> out_of_range{1, 4};
  CHECK_THROWS_WITH(count_correct(logits.view(), labels.data(), {out_of_range.data(), 2}),
                    Catch::Contains("mask[1] = 4 is outside [0, 4)"));
  const std::vector<std::int64_t> bad_label{3};
  CHECK_THROWS_WITH(log_softmax_nll(logits.view(), labels.data(), {bad_label.data(), 1}, 1.0f, grad.view()),
                    Catch::Contains("labels[3] = 5 is outside [0, 3)"));
  const std::vector<std::int64_t> repeated{2, 2};
  CHECK_THROWS_WITH(log_softmax_nll(logits.view(), labels.data(), {repeated.data(), 2}, 1.0f, grad.view()),
                    Catch::Contains("listed twice"));
}
