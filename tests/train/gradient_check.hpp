// The gradient check shared by the layer tests: run a layer's float32 forward and backward and
// compare them with a float64 reference forward and its central finite differences.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <vector>

#include "graph/base/random.hpp"
#include "kernels/tensor.hpp"
#include "tests/reference/naive_layers.hpp"
#include "train/layers/layer.hpp"
#include "train/layers/step.hpp"

namespace halo::test {

// A seed for one test case: Catch's --rng-seed mixed with the case's own number, so inputs are
// random, differ between cases, and are reproduced by passing the same --rng-seed.
inline std::uint64_t case_seed(std::uint64_t case_id) {
  return stream_id(static_cast<std::uint64_t>(Catch::rngSeed()), case_id);
}

struct GradientErrors {
  double forward = 0.0;                // output vs the reference forward
  double input = 0.0;                  // d loss / d x vs finite differences (0 when not computed)
  std::vector<double> parameters;      // each parameter's gradient vs finite differences
  double worst_gradient() const {
    double w = input;
    for (double e : parameters) w = std::max(w, e);
    return w;
  }
};

// Loads `params` (rounded to float, in the order of layer.parameters()) into the layer, fills
// each parameter gradient with random values (the layer must add to them, not overwrite), runs a
// training forward on x and a backward with a random upstream gradient R, and measures the errors
// of the output against reference() and of every gradient against central differences of
// loss = Σ reference() ⊙ R, perturbing x and `params` (which reference() reads) in turn. `floor`
// bounds each gradient's scale from below (max_relative_error), for a layer where some gradient is
// exactly zero for the drawn values.
inline GradientErrors check_layer_gradients(train::Layer& layer, Dense& x, std::vector<Dense>& params,
                                            const std::function<Dense()>& reference, RandomStream& rng,
                                            double floor = 0.0) {
  std::vector<train::Parameter*> ps = layer.parameters();
  REQUIRE(ps.size() == params.size());
  std::vector<Dense> grad_before;
  for (std::size_t k = 0; k < ps.size(); ++k) {
    ps[k]->value.copy_from(to_tensor(params[k]).view());
    grad_before.push_back(random_dense(rng, params[k].rows, params[k].cols));
    ps[k]->grad.copy_from(to_tensor(grad_before.back()).view());
  }
  const kernels::Tensor xt = to_tensor(x);
  train::Step step;
  step.training = true;
  const kernels::Tensor y = layer.forward(xt, step);
  GradientErrors errors;
  errors.forward = max_relative_error(to_dense(y), reference());

  Dense upstream = random_dense(rng, y.rows(), y.cols());
  const kernels::Tensor grad_x = layer.backward(to_tensor(upstream), step);
  const auto loss = [&] { return dot(reference(), upstream); };
  if (layer.input_grad()) errors.input = max_relative_error(to_dense(grad_x), finite_difference(x, loss), floor);
  for (std::size_t k = 0; k < ps.size(); ++k) {
    Dense added = to_dense(ps[k]->grad);
    for (std::size_t i = 0; i < added.v.size(); ++i) added.v[i] -= grad_before[k].v[i];
    errors.parameters.push_back(max_relative_error(added, finite_difference(params[k], loss), floor));
  }
  return errors;
}

// One CHECK per parameter, in order: got[k]'s gradient within `tolerance` (largest relative
// error) of expected[k]'s; for the same layer or model built twice and run two ways.
inline void check_parameter_grads_close(const std::vector<train::Parameter*>& got,
                                        const std::vector<train::Parameter*>& expected, double tolerance) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t k = 0; k < expected.size(); ++k) {
    CAPTURE(expected[k]->name);
    CHECK(max_relative_error(to_dense(got[k]->grad), to_dense(expected[k]->grad)) < tolerance);
  }
}

}  // namespace halo::test
