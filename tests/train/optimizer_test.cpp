// Tests of train/optimizer.*: Adam, AdamW and SGD with momentum against float64 transcriptions of
// PyTorch's update rules, per-parameter weight decay, named state, and resuming from saved state.
#include "train/optimizer.hpp"

#include <catch2/catch.hpp>
#include <limits>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/reference/naive_layers.hpp"
#include "tests/train/gradient_check.hpp"
#include "train/layers/init.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::Dense;

namespace {

// One parameter's value and state in double, updated by PyTorch's formulas.
struct NaiveState {
  Dense value, m, v;
};

void naive_adam_step(NaiveState& s, const Dense& grad, const OptimizerConfig& c, double wd, bool decoupled,
                     std::int64_t t) {
  const double bc1 = 1.0 - std::pow(static_cast<double>(c.beta1), static_cast<double>(t));
  const double bc2 = 1.0 - std::pow(static_cast<double>(c.beta2), static_cast<double>(t));
  for (std::size_t i = 0; i < s.value.v.size(); ++i) {
    double g = grad.v[i];
    if (decoupled)
      s.value.v[i] *= 1.0 - c.lr * wd;
    else
      g += wd * s.value.v[i];
    s.m.v[i] = c.beta1 * s.m.v[i] + (1.0 - c.beta1) * g;
    s.v.v[i] = c.beta2 * s.v.v[i] + (1.0 - c.beta2) * g * g;
    const double denom = std::sqrt(s.v.v[i]) / std::sqrt(bc2) + c.eps;
    s.value.v[i] -= c.lr / bc1 * s.m.v[i] / denom;
  }
}

void naive_sgd_step(NaiveState& s, const Dense& grad, const OptimizerConfig& c, double wd, std::int64_t t) {
  for (std::size_t i = 0; i < s.value.v.size(); ++i) {
    double g = grad.v[i] + wd * s.value.v[i];
    if (c.momentum != 0.0f) {
      s.m.v[i] = t == 1 ? g : c.momentum * s.m.v[i] + g;
      g = c.nesterov ? g + c.momentum * s.m.v[i] : s.m.v[i];
    }
    s.value.v[i] -= c.lr * g;
  }
}

OptimizerConfig config_of(const std::string& kind, bool nesterov = false) {
  OptimizerConfig c;
  c.kind = kind;
  c.lr = 0.05f;
  c.beta1 = 0.8f;
  c.beta2 = 0.95f;
  c.eps = 1e-6f;
  c.momentum = 0.7f;
  c.nesterov = nesterov;
  return c;
}

}  // namespace

TEST_CASE("Optimizers follow PyTorch's update rules with each parameter's own weight decay", "[train]") {
  const std::string kind = GENERATE("adam", "adamw", "sgd", "sgd-nesterov");
  const OptimizerConfig c = config_of(kind == "sgd-nesterov" ? "sgd" : kind, kind == "sgd-nesterov");
  const std::uint64_t seed = test::case_seed(std::hash<std::string>{}(kind));
  CAPTURE(kind, seed);
  RandomStream rng(seed, 0);
  std::vector<Parameter> params;
  params.push_back(make_parameter("conv0.weight", 4, 3, kernels::Device::cpu(), 0.1f));
  params.push_back(make_parameter("conv0.bias", 1, 3, kernels::Device::cpu(), 0.0f));
  std::vector<Parameter*> pointers{&params[0], &params[1]};
  std::vector<NaiveState> naive(2);
  for (std::size_t k = 0; k < 2; ++k) {
    naive[k].value = test::random_dense(rng, params[k].value.rows(), params[k].value.cols());
    params[k].value.copy_from(test::to_tensor(naive[k].value).view());
    naive[k].m = Dense(naive[k].value.rows, naive[k].value.cols);
    naive[k].v = naive[k].m;
  }
  const auto optimizer = make_optimizer(c);
  for (std::int64_t t = 1; t <= 6; ++t) {
    for (std::size_t k = 0; k < 2; ++k) {
      Dense grad = test::random_dense(rng, naive[k].value.rows, naive[k].value.cols);
      params[k].grad.copy_from(test::to_tensor(grad).view());
      if (c.kind == "sgd")
        naive_sgd_step(naive[k], grad, c, params[k].weight_decay, t);
      else
        naive_adam_step(naive[k], grad, c, params[k].weight_decay, c.kind == "adamw", t);
    }
    optimizer->step(pointers);
    CHECK(optimizer->steps() == t);
    for (std::size_t k = 0; k < 2; ++k) {
      CAPTURE(t, k);
      CHECK(test::max_relative_error(test::to_dense(params[k].value), naive[k].value) < 1e-5);
    }
  }
}

TEST_CASE("Optimizer state is named after the parameters and resumes an interrupted run exactly", "[train]") {
  const std::string kind = GENERATE("adam", "adamw", "sgd");
  CAPTURE(kind);
  const OptimizerConfig c = config_of(kind);
  RandomStream rng(test::case_seed(std::hash<std::string>{}(kind) + 1), 0);
  Dense start = test::random_dense(rng, 3, 2);
  std::vector<Dense> grads;
  for (int t = 0; t < 5; ++t) grads.push_back(test::random_dense(rng, 3, 2));
  const auto make = [&] {
    Parameter p = make_parameter("conv1.weight", 3, 2, kernels::Device::cpu(), 0.01f);
    p.value.copy_from(test::to_tensor(start).view());
    return p;
  };
  const auto run = [&](Optimizer& opt, Parameter& p, int from, int to) {
    for (int t = from; t < to; ++t) {
      p.grad.copy_from(test::to_tensor(grads[static_cast<std::size_t>(t)]).view());
      opt.step({&p});
    }
  };

  Parameter straight = make();
  const auto uninterrupted = make_optimizer(c);
  run(*uninterrupted, straight, 0, 5);

  Parameter first = make();
  const auto before = make_optimizer(c);
  run(*before, first, 0, 3);
  const auto saved = before->state({&first});
  std::vector<std::string> names;
  for (const auto& entry : saved) names.push_back(entry.first);
  if (kind == "sgd")
    CHECK(names == std::vector<std::string>{"conv1.weight.momentum_buffer"});
  else
    CHECK(names == std::vector<std::string>{"conv1.weight.exp_avg", "conv1.weight.exp_avg_sq"});

  // A fresh optimiser hands out zero state before its first step, to be restored into.
  const auto after = make_optimizer(c);
  const auto restored = after->state({&first});
  REQUIRE(restored.size() == saved.size());
  for (std::size_t k = 0; k < saved.size(); ++k) {
    CHECK(restored[k].first == saved[k].first);
    CHECK(restored[k].second->to_vector() == std::vector<float>(6, 0.0f));
    restored[k].second->copy_from(saved[k].second->view());
  }
  after->set_steps(before->steps());
  run(*after, first, 3, 5);
  CHECK(after->steps() == 5);
  CHECK(first.value.to_vector() == straight.value.to_vector());
}

TEST_CASE("make_optimizer refuses unknown kinds and out-of-range settings", "[train]") {
  CHECK_THROWS_WITH(make_optimizer(config_of("rmsprop")), Catch::Contains("rmsprop"));
  OptimizerConfig c = config_of("adam");
  c.lr = 0.0f;
  CHECK_THROWS_AS(make_optimizer(c), InvalidArgument);
  c.lr = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH(make_optimizer(c), Catch::Contains("positive and finite"));
  c = config_of("adam");
  c.beta2 = 1.0f;
  CHECK_THROWS_AS(make_optimizer(c), InvalidArgument);
  c = config_of("sgd", true);
  c.momentum = 0.0f;
  CHECK_THROWS_WITH(make_optimizer(c), Catch::Contains("Nesterov"));
}
