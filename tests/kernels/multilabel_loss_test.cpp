// Tests of kernels/multilabel_loss.*: the sigmoid binary cross-entropy and its gradient against a
// float64 reference over every labelled entry (unlabelled entries and unmasked rows zeroed over a
// poisoned gradient), extreme logits, thread-count independence, and the refusals; the GPU twin
// against the CPU.
#include "kernels/multilabel_loss.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;
using Catch::Matchers::Contains;

namespace {

struct Case {
  std::int64_t rows = 0, tasks = 0;
  Tensor logits;
  std::vector<std::int64_t> labels;  // rows x tasks; -1 for a quarter
  std::vector<std::int64_t> mask;    // every other row
  IndexView mask_view() const { return {mask.data(), static_cast<std::int64_t>(mask.size())}; }
};

Case random_case(std::uint64_t seed, std::int64_t rows, std::int64_t tasks) {
  RandomStream rng(seed, 0);
  Case c;
  c.rows = rows;
  c.tasks = tasks;
  c.logits = test::random_tensor(rng, rows, tasks, -30.0, 30.0);
  for (std::int64_t i = 0; i < rows * tasks; ++i)
    c.labels.push_back(rng.below(4) == 0 ? -1 : static_cast<std::int64_t>(rng.below(2)));
  for (std::int64_t r = 1; r < rows; r += 2) c.mask.push_back(r);
  return c;
}

// The loss and gradient in double, entry by entry, from the textbook forms
// -y log σ(z) - (1 - y) log(1 - σ(z)) and σ(z) - y (log-sum-exp for the extremes).
struct Reference {
  double loss = 0;
  std::int64_t count = 0;
  std::vector<double> grad;
};
Reference reference(const Case& c, double scale) {
  Reference ref;
  ref.grad.assign(static_cast<std::size_t>(c.rows * c.tasks), 0.0);
  for (std::int64_t r : c.mask)
    for (std::int64_t j = 0; j < c.tasks; ++j) {
      const std::int64_t y = c.labels[static_cast<std::size_t>(r * c.tasks + j)];
      if (y < 0) continue;
      const double z = c.logits.view().row(r)[j];
      const double log_sigma = -std::log1p(std::exp(-z));     // log σ(z)
      const double log_one_minus = -std::log1p(std::exp(z));  // log(1 - σ(z))
      ref.loss += y == 1 ? -log_sigma : -log_one_minus;
      ++ref.count;
      ref.grad[static_cast<std::size_t>(r * c.tasks + j)] =
          (1.0 / (1.0 + std::exp(-z)) - static_cast<double>(y)) * scale;
    }
  return ref;
}

}  // namespace

TEST_CASE("sigmoid_bce equals the float64 textbook loss and gradient over the labelled entries", "[kernels]") {
  for (const std::int64_t tasks : {1, 7, 112}) {
    CAPTURE(tasks);
    const Case c = random_case(7 + static_cast<std::uint64_t>(tasks), 900, tasks);
    const Reference ref = reference(c, 0.25);
    Tensor grad = test::poisoned(c.rows, tasks);
    const LossSum got = sigmoid_bce(c.logits.view(), c.labels.data(), c.mask_view(), 0.25f, grad.view());
    CHECK(got.count == ref.count);
    CHECK(got.loss_sum == Approx(ref.loss).epsilon(1e-12));
    const TensorView g = grad.view();
    std::int64_t bad = 0;
    for (std::int64_t r = 0; r < c.rows; ++r)
      for (std::int64_t j = 0; j < tasks; ++j) {
        const double want = ref.grad[static_cast<std::size_t>(r * tasks + j)];
        bad += !(std::fabs(g.row(r)[j] - want) <= 1e-6 * std::fabs(want) + 1e-12);
      }
    CHECK(bad == 0);
    LossSum one, two;
    test::with_threads(1, [&] { one = sigmoid_bce(c.logits.view(), c.labels.data(), c.mask_view(), 1.0f, {}); });
    test::with_threads(2, [&] { two = sigmoid_bce(c.logits.view(), c.labels.data(), c.mask_view(), 1.0f, {}); });
    CHECK(one.loss_sum == two.loss_sum);
  }
}

TEST_CASE("sigmoid_bce stays finite for extreme logits and refuses bad rows and labels", "[kernels]") {
  Tensor logits = Tensor::zeros(2, 2);
  logits.view().row(0)[0] = 1000.0f;
  logits.view().row(0)[1] = -1000.0f;
  std::vector<std::int64_t> labels{0, 1, 1, -1};
  std::vector<std::int64_t> mask{0, 1};
  const LossSum loss = sigmoid_bce(logits.view(), labels.data(), {mask.data(), 2}, 1.0f, TensorView{});
  CHECK(loss.count == 3);
  CHECK(loss.loss_sum == Approx(2000.0 + std::log(2.0)));  // 1000 + 1000 + log 2 (z = 0, y = 1)

  labels[3] = 2;
  CHECK_THROWS_WITH(sigmoid_bce(logits.view(), labels.data(), {mask.data(), 2}, 1.0f, TensorView{}),
                    Contains("labels[1, 1] = 2"));
  labels[3] = -1;
  std::vector<std::int64_t> twice{1, 1};
  Tensor grad = Tensor::zeros(2, 2);
  CHECK_THROWS_WITH(sigmoid_bce(logits.view(), labels.data(), {twice.data(), 2}, 1.0f, grad.view()),
                    Contains("listed twice"));
  std::vector<std::int64_t> outside{2};
  CHECK_THROWS_AS(sigmoid_bce(logits.view(), labels.data(), {outside.data(), 1}, 1.0f, TensorView{}), InvalidArgument);
}

TEST_CASE("sigmoid_bce on a GPU matches the CPU twin's loss and gradient", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  for (const std::int64_t tasks : {1, 40, 112}) {
    CAPTURE(tasks);
    const Case c = random_case(31 + static_cast<std::uint64_t>(tasks), 3000, tasks);
    Tensor cpu_grad = test::poisoned(c.rows, tasks);
    const LossSum cpu = sigmoid_bce(c.logits.view(), c.labels.data(), c.mask_view(), 0.5f, cpu_grad.view());
    const Tensor on_gpu = test::on_gpu(c.logits);
    Tensor gpu_grad = Tensor::full(c.rows, tasks, std::numeric_limits<float>::quiet_NaN(), Device::cuda());
    const LossSum gpu = sigmoid_bce(on_gpu.view(), c.labels.data(), c.mask_view(), 0.5f, gpu_grad.view());
    CHECK(gpu.count == cpu.count);
    CHECK(gpu.loss_sum == Approx(cpu.loss_sum).epsilon(1e-10));
    CHECK(test::difference(test::on_host(gpu_grad).view(), test::to_dense(cpu_grad.view()), 1e-6, 1e-9) == "");
  }
}
