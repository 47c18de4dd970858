// Tests of kernels/optimizer_ops.*: Adam, AdamW and SGD (momentum, Nesterov, weight decay)
// against hand-computed steps and against the double form of PyTorch's updates over several
// steps of varying gradients; the row-sparse Adam over SparseRows (touching, stepping and
// clearing rows) against adam_step_rows, and its checks.
#include "kernels/optimizer_ops.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/base/error.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

TEST_CASE("Adam moves each weight by lr · g / (|g| + eps) under a constant gradient", "[kernels]") {
  // With a constant gradient g the bias-corrected moments are exactly g and g² at every step.
  Tensor p = Tensor::from_vector(1, 3, {1.0f, -2.0f, 0.5f});
  const Tensor g = Tensor::from_vector(1, 3, {0.5f, -4.0f, 1e-3f});
  Tensor m = Tensor::zeros(1, 3), v = Tensor::zeros(1, 3);
  AdamHyper h;
  h.lr = 0.1f;
  for (std::int64_t step = 1; step <= 3; ++step) adam_step(p.view(), g.view(), m.view(), v.view(), h, step);
  const std::vector<float> after = p.to_vector();
  CHECK(after[0] == Approx(1.0 - 3 * 0.1 * 0.5 / (0.5 + 1e-8)).epsilon(1e-5));
  CHECK(after[1] == Approx(-2.0 + 3 * 0.1 * 4.0 / (4.0 + 1e-8)).epsilon(1e-5));
  CHECK(after[2] == Approx(0.5 - 3 * 0.1 * 1e-3 / (1e-3 + 1e-8)).epsilon(1e-4));
}

TEST_CASE("Adam and AdamW follow PyTorch's update over several steps", "[kernels]") {
  RandomStream rng(91, 0);
  const std::int64_t rows = 4, cols = 6;
  for (const bool decoupled : {false, true}) {
    CAPTURE(decoupled);
    AdamHyper h;
    h.lr = 0.05f;
    h.beta1 = 0.8f;
    h.beta2 = 0.95f;
    h.eps = 1e-6f;
    h.weight_decay = 0.1f;
    h.decoupled = decoupled;
    Tensor p = test::random_tensor(rng, rows, cols);
    Tensor m = Tensor::zeros(rows, cols), v = Tensor::zeros(rows, cols);
    std::vector<test::NaiveAdam> reference(static_cast<std::size_t>(rows * cols));
    std::vector<double> expected;
    for (const float value : p.to_vector()) expected.push_back(value);
    for (auto& r : reference) {
      r.lr = h.lr;
      r.beta1 = h.beta1;
      r.beta2 = h.beta2;
      r.eps = h.eps;
      r.weight_decay = h.weight_decay;
      r.decoupled = decoupled;
    }
    for (std::int64_t step = 1; step <= 5; ++step) {
      const Tensor g = test::random_tensor(rng, rows, cols);
      adam_step(p.view(), g.view(), m.view(), v.view(), h, step);
      for (std::size_t k = 0; k < expected.size(); ++k) expected[k] = reference[k].update(expected[k], g.data()[k]);
    }
    test::Dense e(rows, cols);
    e.v = expected;
    CHECK(test::difference(p.view(), e, 1e-5, 1e-6) == "");
  }
}

TEST_CASE("SGD with momentum matches hand-computed steps", "[kernels]") {
  // p = 1, g = 1, 2, 3, lr 0.1, momentum 0.9, no decay:
  //   buf = 1            p = 1 - 0.1            = 0.9
  //   buf = 0.9 + 2 = 2.9  p = 0.9 - 0.29       = 0.61
  //   buf = 2.61 + 3 = 5.61 p = 0.61 - 0.561    = 0.049
  Tensor p = Tensor::from_vector(1, 1, {1.0f});
  Tensor buf = test::poisoned(1, 1);  // the first step must not read it
  SgdHyper h;
  h.lr = 0.1f;
  h.momentum = 0.9f;
  const float grads[3] = {1.0f, 2.0f, 3.0f};
  const double expected[3] = {0.9, 0.61, 0.049};
  for (std::int64_t step = 1; step <= 3; ++step) {
    sgd_step(p.view(), Tensor::from_vector(1, 1, {grads[step - 1]}).view(), buf.view(), h, step);
    CHECK(p.data()[0] == Approx(expected[step - 1]).epsilon(1e-5));
  }
  CHECK(buf.data()[0] == Approx(5.61).epsilon(1e-5));
}

TEST_CASE("SGD follows PyTorch's update with weight decay, with and without Nesterov momentum", "[kernels]") {
  RandomStream rng(92, 0);
  struct Case {
    float momentum;
    bool nesterov;
  };
  for (const Case c : {Case{0.0f, false}, Case{0.9f, false}, Case{0.9f, true}}) {
    CAPTURE(c.momentum, c.nesterov);
    SgdHyper h;
    h.lr = 0.2f;
    h.momentum = c.momentum;
    h.nesterov = c.nesterov;
    h.weight_decay = 0.01f;
    Tensor p = test::random_tensor(rng, 3, 5);
    Tensor buf = test::poisoned(3, 5);
    std::vector<test::NaiveSgd> reference(15);
    std::vector<double> expected;
    for (const float value : p.to_vector()) expected.push_back(value);
    for (auto& r : reference) {
      r.lr = h.lr;
      r.momentum = h.momentum;
      r.nesterov = h.nesterov;
      r.weight_decay = h.weight_decay;
    }
    for (std::int64_t step = 1; step <= 4; ++step) {
      const Tensor g = test::random_tensor(rng, 3, 5);
      sgd_step(p.view(), g.view(), c.momentum != 0.0f ? buf.view() : TensorView{}, h, step);
      for (std::size_t k = 0; k < expected.size(); ++k) expected[k] = reference[k].update(expected[k], g.data()[k]);
    }
    test::Dense e(3, 5);
    e.v = expected;
    CHECK(test::difference(p.view(), e, 1e-5, 1e-6) == "");
  }
}

TEST_CASE("optimizer steps check shapes and the step count", "[kernels]") {
  Tensor p = Tensor::zeros(2, 2), m = Tensor::zeros(2, 2), v = Tensor::zeros(2, 2);
  const Tensor g = Tensor::zeros(2, 2);
  CHECK_THROWS_WITH(adam_step(p.view(), g.view(), m.view(), v.view(), AdamHyper{}, 0),
                    Catch::Contains("step counts from 1, got 0"));
  Tensor small = Tensor::zeros(1, 2);
  CHECK_THROWS_WITH(adam_step(p.view(), g.view(), small.view(), v.view(), AdamHyper{}, 1),
                    Catch::Contains("m must be 2 x 2, got 1 x 2"));
  SgdHyper h;
  h.momentum = 0.5f;
  CHECK_THROWS_WITH(sgd_step(p.view(), g.view(), TensorView{}, h, 1), Catch::Contains("momentum must be 2 x 2"));
}

TEST_CASE("adam_step_rows updates only the listed rows, each as adam_step would at its own step", "[kernels]") {
  RandomStream rng(17, 0);
  const std::int64_t rows = 5, cols = 4;
  std::vector<float> values(rows * cols), grads(rows * cols);
  for (float& x : values) x = static_cast<float>(rng.uniform() - 0.5);
  for (float& x : grads) x = static_cast<float>(rng.uniform() - 0.5);
  AdamHyper h;
  h.lr = 0.05f;
  h.weight_decay = 0.01f;
  Tensor p = Tensor::from_vector(rows, cols, values), g = Tensor::from_vector(rows, cols, grads);
  Tensor m = Tensor::zeros(rows, cols), v = Tensor::zeros(rows, cols);
  const std::vector<std::int64_t> listed{3, 0}, steps{1, 4};
  adam_step_rows(p.view(), g.view(), m.view(), v.view(), {listed.data(), 2}, steps.data(), h);
  const std::vector<float> after = p.to_vector();
  for (std::size_t k = 0; k < listed.size(); ++k) {
    const std::int64_t r = listed[k];
    Tensor pr = Tensor::from_vector(1, cols, std::vector<float>(values.begin() + r * cols, values.begin() + (r + 1) * cols));
    const Tensor gr = Tensor::from_vector(1, cols, std::vector<float>(grads.begin() + r * cols, grads.begin() + (r + 1) * cols));
    Tensor mr = Tensor::zeros(1, cols), vr = Tensor::zeros(1, cols);
    adam_step(pr.view(), gr.view(), mr.view(), vr.view(), h, steps[k]);
    const std::vector<float> expected = pr.to_vector();
    for (std::int64_t j = 0; j < cols; ++j) CHECK(after[static_cast<std::size_t>(r * cols + j)] == expected[static_cast<std::size_t>(j)]);
  }
  for (const std::int64_t r : {1, 2, 4})
    for (std::int64_t j = 0; j < cols; ++j)
      CHECK(after[static_cast<std::size_t>(r * cols + j)] == values[static_cast<std::size_t>(r * cols + j)]);
  const std::vector<std::int64_t> repeated{1, 1}, two_steps{1, 1};
  CHECK_THROWS_AS(adam_step_rows(p.view(), g.view(), m.view(), v.view(), {repeated.data(), 2}, two_steps.data(), h),
                  InvalidArgument);
}

TEST_CASE("adam_step_touched steps each touched row with its next count, as adam_step_rows does, then clears it",
          "[kernels]") {
  RandomStream rng(135, 0);
  const std::int64_t rows = 9, cols = 5;
  for (const bool decoupled : {false, true}) {
    CAPTURE(decoupled);
    AdamHyper h;
    h.lr = 0.05f;
    h.beta1 = 0.8f;
    h.weight_decay = 0.1f;
    h.decoupled = decoupled;
    const Tensor p0 = test::random_tensor(rng, rows, cols);
    const Tensor g0 = test::random_tensor(rng, rows, cols);
    const Tensor m0 = test::random_tensor(rng, rows, cols, 0.0, 0.1);
    const Tensor v0 = test::random_tensor(rng, rows, cols, 0.0, 0.1);
    // Rows 1, 4 and 8 touched, with 0, 6 and 2 steps behind them; row 2 has steps but no touch.
    SparseRows state(rows, Device::cpu());
    Array<std::int64_t>& counts = state.host_steps();
    counts[2] = 3;
    counts[4] = 6;
    counts[8] = 2;
    for (const std::int64_t r : {1, 4, 8}) state.touched()[r] = 1;
    Tensor p = p0.clone(), g = g0.clone(), m = m0.clone(), v = v0.clone();
    adam_step_touched(p.view(), g.view(), m.view(), v.view(), state, h);

    Tensor pr = p0.clone(), mr = m0.clone(), vr = v0.clone();
    const std::vector<std::int64_t> listed{1, 4, 8}, next{1, 7, 3};
    adam_step_rows(pr.view(), g0.view(), mr.view(), vr.view(), test::index_view(listed), next.data(), h);
    CHECK(test::identical(p.view(), pr.view()));
    CHECK(test::identical(m.view(), mr.view()));
    CHECK(test::identical(v.view(), vr.view()));
    CHECK(state.host_steps().to_vector() == std::vector<std::int64_t>{0, 1, 3, 0, 7, 0, 0, 0, 3});
    CHECK(state.count_touched() == 0);
    // The touched rows' gradients are cleared, the others kept.
    for (std::int64_t r = 0; r < rows; ++r) {
      const bool was_touched = r == 1 || r == 4 || r == 8;
      CHECK(test::identical(g.view().slice_rows(r, r + 1),
                            was_touched ? Tensor::zeros(1, cols).view() : g0.view().slice_rows(r, r + 1)));
    }
  }
}

TEST_CASE("accumulate_row_grad adds a whole-table gradient and touches its nonzero rows, and clear_touched undoes it",
          "[kernels]") {
  // Row 0 all zero, row 1 one value, row 2 a negative zero only, row 3 all values.
  const Tensor grad_all = Tensor::from_vector(4, 2, {0, 0, 0, 2, -0.0f, 0, 1, -1});
  Tensor grad = Tensor::from_vector(4, 2, {1, 1, 1, 1, 1, 1, 1, 1});
  SparseRows state(4, Device::cpu());
  accumulate_row_grad(grad_all.view(), grad.view(), state);
  accumulate_row_grad(grad_all.view(), grad.view(), state);
  CHECK(grad.to_vector() == std::vector<float>{1, 1, 1, 5, 1, 1, 3, -1});
  CHECK(state.count_touched() == 2);
  CHECK_FALSE(state.is_touched(0));
  CHECK(state.is_touched(1));
  CHECK_FALSE(state.is_touched(2));
  CHECK(state.is_touched(3));
  clear_touched(grad.view(), state);
  CHECK(grad.to_vector() == std::vector<float>{1, 1, 0, 0, 1, 1, 0, 0});
  CHECK(state.count_touched() == 0);
  CHECK(state.host_steps().to_vector() == std::vector<std::int64_t>(4, 0));
}

TEST_CASE("accumulate_row_grad of a chunk adds to its rows only and touches its nonzero ones", "[kernels]") {
  // The chunk is rows 1..2: row 1 gets a zero row, row 2 one value.
  const Tensor chunk = Tensor::from_vector(2, 2, {0, -0.0f, 0, 4});
  Tensor grad = Tensor::from_vector(4, 2, {1, 1, 1, 1, 1, 1, 1, 1});
  SparseRows state(4, Device::cpu());
  accumulate_row_grad(chunk.view(), grad.view(), state, 1);
  CHECK(grad.to_vector() == std::vector<float>{1, 1, 1, 1, 1, 5, 1, 1});
  CHECK(state.count_touched() == 1);
  CHECK(state.is_touched(2));
  CHECK_THROWS_WITH(accumulate_row_grad(chunk.view(), grad.view(), state, 3),
                    Catch::Contains("from row 3 must lie within grad (4 x 2)"));
  CHECK_THROWS_AS(accumulate_row_grad(chunk.view(), grad.view(), state, -1), InvalidArgument);
}

TEST_CASE("the row-sparse steps refuse tensors whose rows or device differ from the row state's", "[kernels]") {
  SparseRows state(3, Device::cpu());
  Tensor three = Tensor::zeros(3, 2), four = Tensor::zeros(4, 2);
  Tensor m = Tensor::zeros(3, 2), v = Tensor::zeros(3, 2), g = Tensor::zeros(3, 2);
  CHECK_THROWS_WITH(accumulate_row_grad(four.view(), three.view(), state), Catch::Contains("grad_all must be 3 x 2"));
  CHECK_THROWS_WITH(clear_touched(four.view(), state), Catch::Contains("grad has 4 rows, the row state 3"));
  CHECK_THROWS_WITH(adam_step_touched(three.view(), g.view(), m.view(), three.view(), state, AdamHyper{}),
                    Catch::Contains("four separate tensors"));
  const TensorView on_gpu{three.data(), 3, 2, 2, Device::cuda()};
  CHECK_THROWS_WITH(clear_touched(on_gpu, state), Catch::Contains("is on cuda:0, expected cpu"));
  CHECK_THROWS_AS(SparseRows(-1, Device::cpu()), InvalidArgument);
  CHECK_THROWS_WITH(state.is_touched(3), Catch::Contains("row 3 is outside [0, 3)"));
}
