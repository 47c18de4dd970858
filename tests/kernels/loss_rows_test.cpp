// Tests of kernels/loss.* LossRows on the CPU: the loss, its gradient and the accuracy over
// prepared rows against the double reference and the per-call API, the checks made once when the
// rows are prepared, and the refusals of logits that do not fit them.
#include "kernels/loss.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

// Naive count of the masked rows whose first largest logit is at the label.
std::int64_t naive_correct(const Tensor& logits, const std::vector<std::int64_t>& labels,
                           const std::vector<std::int64_t>& mask) {
  std::int64_t correct = 0;
  for (const std::int64_t r : mask) {
    const float* z = logits.view().row(r);
    std::int64_t best = 0;
    for (std::int64_t j = 1; j < logits.cols(); ++j)
      if (z[j] > z[best]) best = j;
    correct += best == labels[static_cast<std::size_t>(r)] ? 1 : 0;
  }
  return correct;
}

}  // namespace

TEST_CASE("loss and accuracy over prepared rows equal the reference and the per-call results", "[kernels]") {
  RandomStream rng(91, 0);
  const std::int64_t rows = 60, classes = 5;
  const Tensor logits = test::random_tensor(rng, rows, classes, -3.0, 3.0);
  const std::vector<std::int64_t> labels = test::random_labels(rng, rows, classes);
  const std::vector<std::int64_t> mask{59, 3, 17, 0, 42, 8, 33};
  LossRows prepared(labels.data(), test::index_view(mask), rows, classes, Device::cpu(), true);
  // Moving keeps what was prepared.
  const LossRows moved = std::move(prepared);
  CHECK(moved.size() == 7);

  Tensor grad = test::poisoned(rows, classes);
  const LossSum sum = log_softmax_nll(logits.view(), moved, 0.5f, grad.view());
  CHECK(sum.count == 7);
  CHECK(sum.loss_sum == Approx(test::naive_nll(test::to_dense(logits.view()), labels, mask)).epsilon(1e-12));
  Tensor per_call_grad = test::poisoned(rows, classes);
  const LossSum per_call = log_softmax_nll(logits.view(), labels.data(), test::index_view(mask), 0.5f, per_call_grad.view());
  CHECK(sum.loss_sum == per_call.loss_sum);
  CHECK(test::identical(grad.view(), per_call_grad.view()));

  CHECK(count_correct(logits.view(), moved) == naive_correct(logits, labels, mask));
  CHECK(count_correct(logits.view(), moved) == count_correct(logits.view(), labels.data(), test::index_view(mask)));
}

TEST_CASE("LossRows checks the mask and labels once, and the calls check the logits against them", "[kernels]") {
  const std::vector<std::int64_t> labels{0, 2, 1, 1};
  const std::vector<std::int64_t> out_of_range{0, 4};
  const std::vector<std::int64_t> repeated{1, 3, 1};
  CHECK_THROWS_AS(LossRows(labels.data(), test::index_view(out_of_range), 4, 3, Device::cpu(), false), InvalidArgument);
  CHECK_THROWS_AS(LossRows(labels.data(), test::index_view(repeated), 4, 3, Device::cpu(), true), InvalidArgument);
  CHECK_THROWS_AS(LossRows(labels.data(), test::index_view(repeated), 4, 2, Device::cpu(), false), InvalidArgument);
  // Repeated rows are fine for the accuracy, not for a loss with a gradient.
  const LossRows counted(labels.data(), test::index_view(repeated), 4, 3, Device::cpu(), false);
  const Tensor logits = Tensor::from_vector(4, 3, {1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0});
  CHECK(count_correct(logits.view(), counted) == 3);
  Tensor grad = Tensor::empty(4, 3);
  CHECK_THROWS_AS(log_softmax_nll(logits.view(), counted, 1.0f, grad.view()), InvalidArgument);
  const Tensor wider = Tensor::zeros(4, 4);
  CHECK_THROWS_AS(count_correct(wider.view(), counted), InvalidArgument);
  const Tensor taller = Tensor::zeros(5, 3);
  CHECK_THROWS_AS(log_softmax_nll(taller.view(), counted, 1.0f, {}), InvalidArgument);
}
