// Tests of kernels::bias_relu_dropout, a hidden ReLU layer's epilogue in one pass: bitwise the
// passes it replaces (add_bias, relu_forward, dropout_forward in turn) for every width, rate, key
// and id mapping, on any thread count; and relu_backward with the dropout's scale is bitwise
// dropout_backward then relu_backward from its output.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "kernels/dropout.hpp"
#include "kernels/elementwise.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

// The three passes the epilogue fuses, on a copy of y.
Tensor separate_passes(const Tensor& y, const Tensor* bias, float p, DropoutKey key, IndexView ids) {
  Tensor out = y.clone();
  if (bias != nullptr) add_bias(out.view(), bias->view());
  relu_forward(out.view(), out.view());
  if (p > 0.0f) dropout_forward(out.view(), out.view(), p, key, ids);
  return out;
}

}  // namespace

TEST_CASE("bias_relu_dropout is bitwise add_bias then relu_forward then dropout_forward", "[kernels]") {
  RandomStream rng(171, 0);
  for (const std::int64_t cols : {1, 7, 8, 9, 64, 130}) {
    // More than two parallel chunks, partial batches of Philox blocks, negative values (ReLU's
    // zeros), and a bias large enough to flip signs.
    const std::int64_t rows = 2 * 8192 / cols + 37;
    const Tensor y = test::random_tensor(rng, rows, cols, -1.5, 1.5);
    const Tensor bias = test::random_tensor(rng, 1, cols, -1.0, 1.0);
    std::vector<std::int64_t> ids(static_cast<std::size_t>(rows));
    for (std::int64_t& id : ids) id = static_cast<std::int64_t>(rng.next_u64() >> 20);
    for (const float p : {0.0f, 0.1f, 0.5f, 0.9f})
      for (const bool with_bias : {false, true})
        for (const bool with_ids : {false, true}) {
          CAPTURE(cols, p, with_bias, with_ids);
          const DropoutKey key{rng.next_u64(), 4, 2};
          const IndexView global = with_ids ? test::index_view(ids) : IndexView{};
          const Tensor expected = separate_passes(y, with_bias ? &bias : nullptr, p, key, global);
          for (const int threads : {1, 2, 3}) {
            test::Strided fused = test::strided_copy(y, 3, std::numeric_limits<float>::quiet_NaN());
            test::with_threads(threads, [&] {
              bias_relu_dropout(fused.view, with_bias ? bias.view() : ConstTensorView{}, p, key, global);
            });
            CAPTURE(threads);
            CHECK(test::identical(fused.view, expected.view()));
            CHECK(fused.padding_intact(std::numeric_limits<float>::quiet_NaN()));
          }
          // The ids built once (DeviceIndex) give the same bits.
          Tensor with_index = y.clone();
          const DeviceIndex index(global, std::numeric_limits<std::int64_t>::max(), Device::cpu(), IndexUse::rows,
                                  "test");
          bias_relu_dropout(with_index.view(), with_bias ? bias.view() : ConstTensorView{}, p, key, index);
          CHECK(test::identical(with_index.view(), expected.view()));
        }
  }
}

TEST_CASE("relu_backward scaled by 1 over 1 - p from the dropped output is dropout then ReLU backward bitwise",
          "[kernels]") {
  RandomStream rng(172, 0);
  const std::int64_t rows = 3001, cols = 19;
  const Tensor pre = test::random_tensor(rng, rows, cols, -1.5, 1.5);
  const Tensor grad = test::random_tensor(rng, rows, cols, -2.0, 2.0);
  for (const float p : {0.2f, 0.6f}) {
    CAPTURE(p);
    const DropoutKey key{rng.next_u64(), 9, 1};
    Tensor out = pre.clone();
    bias_relu_dropout(out.view(), {}, p, key, IndexView{});
    // What the separate layers do: the dropout's backward with its mask, then ReLU's from the
    // undropped output.
    Tensor undropped = pre.clone();
    relu_forward(undropped.view(), undropped.view());
    Tensor expected = grad.clone();
    dropout_backward(expected.view(), expected.view(), p, key, IndexView{});
    relu_backward(undropped.view(), expected.view(), expected.view());
    Tensor fused = test::poisoned(rows, cols);
    relu_backward(out.view(), grad.view(), fused.view(), dropout_scale(p));
    CHECK(test::identical(fused.view(), expected.view()));
    // Not all-zero, not all kept.
    std::int64_t nonzero = 0;
    for (const float v : fused.to_vector()) nonzero += v != 0.0f ? 1 : 0;
    CHECK(nonzero > rows * cols / 10);
    CHECK(nonzero < rows * cols / 2);
  }
}

TEST_CASE("bias_relu_dropout refuses a bias of the wrong width and a p outside 0 <= p < 1", "[kernels]") {
  Tensor y = Tensor::full(4, 5, 1.0f);
  const Tensor bias = Tensor::full(1, 4, 0.5f);
  CHECK_THROWS_WITH(bias_relu_dropout(y.view(), bias.view(), 0.5f, {}, IndexView{}),
                    Catch::Contains("bias_relu_dropout") && Catch::Contains("bias"));
  CHECK_THROWS_WITH(bias_relu_dropout(y.view(), {}, 1.0f, {}, IndexView{}), Catch::Contains("p must be in [0, 1)"));
}
