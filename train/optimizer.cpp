// Adam, AdamW and SGD with momentum over the fused kernels of kernels/optimizer_ops.hpp, with
// their state kept per parameter name.
#include "train/optimizer.hpp"

#include <cmath>
#include <map>
#include <utility>

#include "graph/base/error.hpp"
#include "kernels/optimizer_ops.hpp"

namespace halo::train {

using kernels::Tensor;

namespace {

// State tensors of one kind per parameter ("<parameter>.<suffix>"), zero-initialised on first use.
class StateStore {
 public:
  explicit StateStore(std::vector<std::string> suffixes) : suffixes_(std::move(suffixes)) {}

  // The state of `p` (one tensor per suffix, p's shape and device), created when missing.
  std::vector<Tensor>& of(const Parameter& p) {
    auto it = states_.find(p.name);
    if (it == states_.end()) {
      std::vector<Tensor> tensors;
      for (std::size_t k = 0; k < suffixes_.size(); ++k)
        tensors.push_back(Tensor::zeros(p.value.rows(), p.value.cols(), p.value.device()));
      it = states_.emplace(p.name, std::move(tensors)).first;
    }
    std::vector<Tensor>& tensors = it->second;
    HALO_EXPECTS(tensors[0].rows() == p.value.rows() && tensors[0].cols() == p.value.cols(),
                 "Optimizer: parameter " + p.name + " is " + std::to_string(p.value.rows()) + " x " +
                     std::to_string(p.value.cols()) + " but its state is " + std::to_string(tensors[0].rows()) +
                     " x " + std::to_string(tensors[0].cols()));
    return tensors;
  }

  std::vector<std::pair<std::string, Tensor*>> named(const std::vector<Parameter*>& parameters) {
    std::vector<std::pair<std::string, Tensor*>> out;
    for (const Parameter* p : parameters) {
      std::vector<Tensor>& tensors = of(*p);
      for (std::size_t k = 0; k < suffixes_.size(); ++k) out.emplace_back(p->name + "." + suffixes_[k], &tensors[k]);
    }
    return out;
  }

 private:
  std::vector<std::string> suffixes_;
  std::map<std::string, std::vector<Tensor>> states_;
};

void check_gradient(const Parameter& p) {
  HALO_EXPECTS(p.grad.rows() == p.value.rows() && p.grad.cols() == p.value.cols(),
               "Optimizer: parameter " + p.name + " is " + std::to_string(p.value.rows()) + " x " +
                   std::to_string(p.value.cols()) + " but its gradient " + std::to_string(p.grad.rows()) + " x " +
                   std::to_string(p.grad.cols()));
}

// torch.optim.Adam (decoupled = false: weight_decay · w added to the gradient) and torch.optim.AdamW
// (decoupled = true: w *= 1 - lr · weight_decay before the update).
class Adam : public Optimizer {
 public:
  Adam(const OptimizerConfig& c, bool decoupled)
      : config_(c), decoupled_(decoupled), state_({"exp_avg", "exp_avg_sq"}) {}

  void step(const std::vector<Parameter*>& parameters) override {
    const std::int64_t t = steps_ + 1;
    for (Parameter* p : parameters) {
      check_gradient(*p);
      std::vector<Tensor>& s = state_.of(*p);
      kernels::AdamHyper h;
      h.lr = config_.lr;
      h.beta1 = config_.beta1;
      h.beta2 = config_.beta2;
      h.eps = config_.eps;
      h.weight_decay = p->weight_decay;
      h.decoupled = decoupled_;
      kernels::adam_step(p->value.view(), p->grad.view(), s[0].view(), s[1].view(), h, t);
    }
    steps_ = t;
  }
  std::int64_t steps() const override { return steps_; }
  void set_steps(std::int64_t steps) override { steps_ = steps; }
  std::vector<std::pair<std::string, Tensor*>> state(const std::vector<Parameter*>& parameters) override {
    return state_.named(parameters);
  }

 private:
  OptimizerConfig config_;
  bool decoupled_;
  StateStore state_;
  std::int64_t steps_ = 0;
};

// torch.optim.SGD with momentum (dampening 0), optionally Nesterov; weight_decay · w is added to
// the gradient.
class Sgd : public Optimizer {
 public:
  explicit Sgd(const OptimizerConfig& c) : config_(c), state_({"momentum_buffer"}) {}

  void step(const std::vector<Parameter*>& parameters) override {
    const std::int64_t t = steps_ + 1;
    for (Parameter* p : parameters) {
      check_gradient(*p);
      std::vector<Tensor>& s = state_.of(*p);
      kernels::SgdHyper h;
      h.lr = config_.lr;
      h.momentum = config_.momentum;
      h.weight_decay = p->weight_decay;
      h.nesterov = config_.nesterov;
      kernels::sgd_step(p->value.view(), p->grad.view(), s[0].view(), h, t);
    }
    steps_ = t;
  }
  std::int64_t steps() const override { return steps_; }
  void set_steps(std::int64_t steps) override { steps_ = steps; }
  std::vector<std::pair<std::string, Tensor*>> state(const std::vector<Parameter*>& parameters) override {
    return state_.named(parameters);
  }

 private:
  OptimizerConfig config_;
  StateStore state_;
  std::int64_t steps_ = 0;
};

}  // namespace

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& c) {
  HALO_EXPECTS(c.lr > 0 && std::isfinite(c.lr),
               "make_optimizer: lr must be positive and finite, got " + std::to_string(c.lr));
  if (c.kind == "adam" || c.kind == "adamw") {
    HALO_EXPECTS(c.beta1 >= 0 && c.beta1 < 1 && c.beta2 >= 0 && c.beta2 < 1,
                 "make_optimizer: betas must be in [0, 1), got " + std::to_string(c.beta1) + " and " +
                     std::to_string(c.beta2));
    HALO_EXPECTS(c.eps > 0, "make_optimizer: eps must be positive, got " + std::to_string(c.eps));
    return std::make_unique<Adam>(c, c.kind == "adamw");
  }
  if (c.kind == "sgd") {
    HALO_EXPECTS(c.momentum >= 0, "make_optimizer: momentum must be non-negative, got " + std::to_string(c.momentum));
    HALO_EXPECTS(!c.nesterov || c.momentum > 0, "make_optimizer: Nesterov momentum needs momentum > 0");
    return std::make_unique<Sgd>(c);
  }
  throw InvalidArgument("make_optimizer: kind must be adam, adamw or sgd, got '" + c.kind + "'");
}

}  // namespace halo::train
