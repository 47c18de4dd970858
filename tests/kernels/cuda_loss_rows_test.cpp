// GPU tests of kernels/loss.* LossRows on a GPU: the prepared rows live in device memory, and the
// loss, gradient and accuracy over them equal the per-call GPU results bit for bit and the CPU
// twin's to rounding; a mismatch of device is refused.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/loss.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

TEST_CASE("loss and accuracy over rows prepared on a GPU match the per-call and CPU results", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(113, 0);
  const std::int64_t rows = 4000, classes = 41;
  const Tensor logits = test::random_tensor(rng, rows, classes, -6.0, 6.0);
  std::vector<std::int64_t> labels(static_cast<std::size_t>(rows));
  for (auto& l : labels) l = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(classes)));
  std::vector<std::int64_t> mask;
  for (std::int64_t r = rows - 2; r >= 0; r -= 7) mask.push_back(r);
  const IndexView m{mask.data(), static_cast<std::int64_t>(mask.size())};
  const LossRows prepared(labels.data(), m, rows, classes, Device::cuda(), true);
  REQUIRE(prepared.device_rows_and_labels() != nullptr);
  CHECK_THROWS_AS(cuda::require_host_memory("test", "prepared rows", prepared.device_rows_and_labels(), 0),
                  InvalidArgument);

  const Tensor lg = test::on_gpu(logits);
  const float scale = 1.0f / static_cast<float>(mask.size());
  Tensor grad = Tensor::full(rows, classes, std::numeric_limits<float>::quiet_NaN(), Device::cuda());
  const LossSum sum = log_softmax_nll(lg.view(), prepared, scale, grad.view());
  Tensor per_call_grad = Tensor::full(rows, classes, std::numeric_limits<float>::quiet_NaN(), Device::cuda());
  const LossSum per_call = log_softmax_nll(lg.view(), labels.data(), m, scale, per_call_grad.view());
  CHECK(sum.count == per_call.count);
  CHECK(sum.loss_sum == per_call.loss_sum);
  CHECK(test::identical(test::on_host(grad).view(), test::on_host(per_call_grad).view()));
  Tensor cpu_grad = test::poisoned(rows, classes);
  const LossSum cpu = log_softmax_nll(logits.view(), labels.data(), m, scale, cpu_grad.view());
  CHECK(sum.loss_sum == Approx(cpu.loss_sum).epsilon(1e-10));
  CHECK(test::difference(test::on_host(grad).view(), test::to_dense(cpu_grad.view()), 1e-6, 1e-9) == "");

  const std::int64_t correct = count_correct(lg.view(), prepared);
  CHECK(correct == count_correct(logits.view(), labels.data(), m));
  CHECK(correct > 0);
  // Logits on the CPU do not fit rows prepared on the GPU.
  CHECK_THROWS_AS(count_correct(logits.view(), prepared), InvalidArgument);
  // An empty split prepares nothing and counts nothing.
  const LossRows empty(labels.data(), IndexView{}, rows, classes, Device::cuda(), true);
  CHECK(count_correct(lg.view(), empty) == 0);
  CHECK(log_softmax_nll(lg.view(), empty, 1.0f, TensorView{}).count == 0);
}
