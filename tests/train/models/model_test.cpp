// Tests of train/models/model.* and train/models/graph_operators.cpp: the operators against the dense
// normalisations, the model's structure (names, shapes, decay groups, initialisation), and its
// forward and backward through log_softmax_nll against a float64 dense model and central finite
// differences, with dropout and batch norm, in training and evaluation.
#include "train/models/model.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/half.hpp"
#include "graph/build.hpp"
#include "kernels/attention.hpp"
#include "kernels/dropout.hpp"
#include "kernels/loss.hpp"
#include "tests/reference/naive_csr.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/train/gradient_check.hpp"
#include "train/layers/activation.hpp"
#include "train/layers/batch_norm.hpp"
#include "train/layers/gat_conv.hpp"
#include "train/layers/gcn_conv.hpp"
#include "train/layers/remembered_dropout.hpp"
#include "train/layers/sage_conv.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::Dense;

namespace {

// The model of ModelConfig written with dense float64 matrices: per layer, the dropout mask
// (scaled by 1/(1-p); empty when inactive) → conv → [batch norm] → ReLU.
struct ReferenceModel {
  ModelConfig config;
  Dense aggregation;                    // Â (gcn) or D^-1 A (sage)
  std::map<std::string, Dense> params;  // by parameter name
  std::vector<Dense> masks;             // per layer
  std::vector<std::vector<double>> batch_mean, batch_var;       // recorded by a training forward
  std::vector<std::vector<double>> running_mean, running_var;  // used by an evaluation forward

  Dense forward(const Dense& x, bool training) {
    Dense h = x;
    const auto layers = static_cast<std::size_t>(config.layers);
    batch_mean.assign(layers, {});
    batch_var.assign(layers, {});
    for (std::size_t i = 0; i < layers; ++i) {
      const std::string conv = "conv" + std::to_string(i), bn = "bn" + std::to_string(i);
      if (training && !masks[i].v.empty()) h = test::multiply(h, masks[i]);
      // Convs feeding batch norm have no bias (batch norm's beta shifts instead).
      const bool normalized = config.batch_norm && i + 1 < layers;
      const Dense* bias = config.bias && !normalized ? &params.at(conv + ".bias") : nullptr;
      h = config.kind == "gcn" ? test::naive_gcn(aggregation, h, params.at(conv + ".weight"), bias)
                               : test::naive_sage(aggregation, h, params.at(conv + ".weight"),
                                                  params.at(conv + ".root_weight"), bias);
      if (i + 1 == layers) break;
      if (config.batch_norm) {
        if (training) {
          test::column_statistics(h, batch_mean[i], batch_var[i]);
          h = test::naive_batch_norm(h, batch_mean[i], batch_var[i], params.at(bn + ".gamma"), params.at(bn + ".beta"));
        } else {
          h = test::naive_batch_norm(h, running_mean[i], running_var[i], params.at(bn + ".gamma"),
                                     params.at(bn + ".beta"));
        }
      }
      h = test::relu(h);
    }
    return h;
  }
};

struct ModelCase {
  const char* name;
  ModelConfig config;
  std::int64_t in_dim;
  bool symmetric;
};

ModelConfig config_of(const std::string& kind, int layers, std::int64_t hidden, float dropout, float input_dropout,
                      bool batch_norm, bool bias);

// config_of's, with `recompute`.
ModelConfig recomputing(ModelConfig c, const std::string& recompute) {
  c.recompute = recompute;
  return c;
}

// config_of's, with activation dtype bf16.
ModelConfig in_bf16(ModelConfig c) {
  c.activation_dtype = "bf16";
  return c;
}

ModelConfig config_of(const std::string& kind, int layers, std::int64_t hidden, float dropout, float input_dropout,
                      bool batch_norm, bool bias) {
  ModelConfig c;
  c.kind = kind;
  c.layers = layers;
  c.hidden = hidden;
  c.dropout = dropout;
  c.input_dropout = input_dropout;
  c.batch_norm = batch_norm;
  c.bias = bias;
  return c;
}

// The dense matrix of the operator a model of `kind` aggregates with, built by the definitions.
Dense reference_operator(const graph::CsrGraph& g, const std::string& kind) {
  const test::DenseMatrix a = test::to_dense(test::to_naive(g));
  Dense out(a.rows, a.cols);
  if (kind == "gcn") {
    const test::DenseMatrix n = test::naive_gcn_normalize(a);
    out.v = n.value;
    return out;
  }
  for (std::int64_t i = 0; i < a.rows; ++i) {
    double degree = 0.0;
    for (std::int64_t j = 0; j < a.cols; ++j) degree += a.at(i, j);
    for (std::int64_t j = 0; j < a.cols; ++j) out.at(i, j) = degree > 0 ? a.at(i, j) / degree : 0.0;
  }
  return out;
}

// A training step of `seed` at `epoch`: its dropout masks' key.
Step training_step(std::uint64_t seed, std::uint64_t epoch) {
  Step step;
  step.seed = seed;
  step.epoch = epoch;
  return step;
}

// Random labels for n vertices, the loss taken on every stride-th: the data of a training step.
struct LossTask {
  std::vector<std::int64_t> labels, rows;
  std::int64_t classes;

  LossTask(RandomStream& rng, std::int64_t n, std::int64_t classes_, std::int64_t stride) : classes(classes_) {
    for (std::int64_t i = 0; i < n; ++i) {
      labels.push_back(static_cast<std::int64_t>(rng.below(classes)));
      if (i % stride == 0) rows.push_back(i);
    }
  }
  // d (mean NLL over rows) / d logits, written over NaN.
  kernels::Tensor gradient(const kernels::Tensor& logits) const {
    kernels::Tensor grad = kernels::Tensor::full(logits.rows(), classes, std::nanf(""));
    kernels::log_softmax_nll(logits.view(), labels.data(), {rows.data(), static_cast<std::int64_t>(rows.size())},
                             1.0f / static_cast<float>(rows.size()), grad.view());
    return grad;
  }
};

// Draws the same random values (uniform in ±scale) into a model's parameters and a reference
// stack's, which must name them alike and in the same order; zeroes the reference's gradients.
void draw_shared_values(const std::vector<Parameter*>& parameters, const std::vector<Parameter*>& reference,
                        RandomStream& rng, double scale) {
  REQUIRE(parameters.size() == reference.size());
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    REQUIRE(parameters[k]->name == reference[k]->name);
    Dense drawn = test::random_dense(rng, parameters[k]->value.rows(), parameters[k]->value.cols(), scale);
    const kernels::Tensor value = test::to_tensor(drawn);
    parameters[k]->value.copy_from(value.view());
    reference[k]->value.copy_from(value.view());
    reference[k]->grad.fill(0.0f);
  }
}

// A model's training step at `epoch` (gradients zeroed first) on random features (n x in_dim)
// and labels, after draw_shared_values into its parameters and the reference's: the data a
// reference stack built of separate layers then runs on, and the model's logits.
struct SharedStep {
  kernels::Tensor features;
  LossTask task;
  Step step;
  kernels::Tensor logits;
};

SharedStep shared_step(Model& model, const std::vector<Parameter*>& reference, std::uint64_t seed, std::int64_t n,
                       std::int64_t in_dim, std::int64_t classes, std::uint64_t epoch, double scale) {
  RandomStream rng(seed, 1);
  draw_shared_values(model.parameters(), reference, rng, scale);
  Dense values = test::random_dense(rng, n, in_dim);
  SharedStep s{test::to_tensor(values), LossTask(rng, n, classes, 2), training_step(seed, epoch), {}};
  model.zero_grad();
  s.logits = model.forward(s.features, s.step);
  model.backward(s.task.gradient(s.logits), s.step);
  return s;
}

// The stack of separate layers a Model stands for, dropout -> conv -> [batch norm] -> activation
// (dropout p[i] keyed by layer i, each writing a new tensor; the activation's backward reading the
// undropped output): one training step on the shared step's data. Returns its logits; the
// gradients are in the layers' parameters.
kernels::Tensor reference_step(const std::vector<std::unique_ptr<GraphConv>>& convs,
                               const std::vector<std::unique_ptr<BatchNorm>>& norms, const std::vector<float>& p,
                               ActivationKind kind, const SharedStep& shared) {
  const Step& step = shared.step;
  const std::size_t layers = convs.size();
  std::vector<Dropout> dropouts;
  for (std::size_t i = 0; i < layers; ++i) dropouts.emplace_back(p[i], static_cast<std::uint32_t>(i));
  std::vector<Activation> activations(layers, Activation(kind));
  std::vector<kernels::Tensor> dropped(layers), conv_out(layers), out(layers);
  const kernels::Tensor* x = &shared.features;
  kernels::Tensor logits;
  for (std::size_t i = 0; i < layers; ++i) {
    dropped[i] = dropouts[i].forward(*x, step);
    kernels::Tensor y = convs[i]->forward(dropped[i], step);
    if (i + 1 == layers) {
      logits = std::move(y);
      break;
    }
    if (norms[i]) {
      conv_out[i] = std::move(y);
      y = norms[i]->forward(conv_out[i], step);
    }
    out[i] = activations[i].forward(std::move(y), step);
    x = &out[i];
  }
  kernels::Tensor g = shared.task.gradient(logits);
  for (std::size_t i = layers; i-- > 0;) {
    if (i + 1 < layers) {
      g = activations[i].backward(std::move(g));
      if (norms[i]) g = norms[i]->backward(std::move(g), step);
    }
    g = convs[i]->backward(std::move(g), step);
    if (i > 0) g = dropouts[i].backward(std::move(g), step);
  }
  return logits;
}

}  // namespace

TEST_CASE("build_graph_operators builds D^-1/2 (A+I) D^-1/2 for gcn and D^-1 A for sage", "[train]") {
  const std::string kind = GENERATE("gcn", "sage");
  const bool symmetric = GENERATE(false, true);
  const graph::CsrGraph g = test::random_graph(test::case_seed(symmetric ? 11 : 12), 15, 35, symmetric);
  GraphOperators ops = build_graph_operators(g, kind);
  Aggregation* op = kind == "gcn" ? ops.gcn.get() : ops.mean.get();
  REQUIRE(op != nullptr);
  CHECK((kind == "gcn" ? ops.mean : ops.gcn) == nullptr);
  auto* local = dynamic_cast<LocalAggregation*>(op);
  REQUIRE(local != nullptr);
  CHECK(test::max_relative_error(test::dense_matrix(local->matrix()), reference_operator(g, kind)) < 1e-6);
  CHECK(op->num_vertices() == 15);
  CHECK_THROWS_WITH(build_graph_operators(g, "rgcn"), Catch::Contains("rgcn"));
}

TEST_CASE("Model names its parameters and puts only conv weights in the decay group", "[train]") {
  GraphOperators ops = build_graph_operators(test::random_graph(1, 10, 20, true), "sage");
  ModelConfig c = config_of("sage", 3, 8, 0.5f, 0.1f, true, true);
  c.weight_decay = 5e-4f;
  const bool first_only = GENERATE(false, true);
  c.weight_decay_first_layer_only = first_only;
  Model model(c, 6, 4, 7, ops);
  std::vector<std::string> names;
  for (const Parameter* p : model.parameters()) names.push_back(p->name);
  // Only the last conv has a bias: batch norm follows the others.
  CHECK(names == std::vector<std::string>{"conv0.weight", "conv0.root_weight", "bn0.gamma", "bn0.beta",
                                          "conv1.weight", "conv1.root_weight", "bn1.gamma", "bn1.beta",
                                          "conv2.weight", "conv2.root_weight", "conv2.bias"});
  std::int64_t values = 0;
  for (const Parameter* p : model.parameters()) {
    const bool is_weight = p->name.rfind("weight") == p->name.size() - 6;
    const bool decays = is_weight && (!first_only || p->name.rfind("conv0", 0) == 0);
    CAPTURE(p->name);
    CHECK(p->weight_decay == (decays ? 5e-4f : 0.0f));
    values += p->value.numel();
  }
  CHECK(model.parameters()[0]->value.rows() == 6);
  CHECK(model.parameters()[10]->value.cols() == 4);
  CHECK(model.parameter_bytes() == values * 4);
  const auto buffers = model.buffers();
  REQUIRE(buffers.size() == 4);
  CHECK(buffers[0].first == "bn0.running_mean");
  CHECK(buffers[3].first == "bn1.running_var");
}

TEST_CASE("Model draws Glorot weights and zero biases from its seed alone", "[train]") {
  GraphOperators ops = build_graph_operators(test::random_graph(2, 10, 20, true), "gcn");
  const ModelConfig c = config_of("gcn", 2, 16, 0.5f, 0.5f, false, true);
  Model a(c, 30, 5, 123, ops), b(c, 30, 5, 123, ops), other(c, 30, 5, 124, ops);
  for (std::size_t k = 0; k < a.parameters().size(); ++k) {
    const Parameter& p = *a.parameters()[k];
    CAPTURE(p.name);
    CHECK(p.value.to_vector() == b.parameters()[k]->value.to_vector());
    const std::vector<float> values = p.value.to_vector();
    if (p.name.find("bias") != std::string::npos) {
      CHECK(values == std::vector<float>(values.size(), 0.0f));
      continue;
    }
    CHECK(p.value.to_vector() != other.parameters()[k]->value.to_vector());
    const double limit = std::sqrt(6.0 / static_cast<double>(p.value.rows() + p.value.cols()));
    for (float v : values) CHECK(std::abs(v) <= limit);
  }
  // Two weights of one model come from different streams.
  CHECK(a.parameters()[0]->value.to_vector()[0] != a.parameters()[2]->value.to_vector()[0]);
}

TEST_CASE("Model gradients through log_softmax_nll match finite differences of a float64 model", "[train]") {
  const ModelCase mc = GENERATE(
      ModelCase{"gcn, transform first, dropout", config_of("gcn", 2, 5, 0.5f, 0.3f, false, true), 7, false},
      ModelCase{"gcn, aggregate first, batch norm", config_of("gcn", 3, 6, 0.4f, 0.0f, true, true), 3, true},
      ModelCase{"gcn, one layer, no bias", config_of("gcn", 1, 16, 0.5f, 0.5f, false, false), 4, false},
      ModelCase{"sage, batch norm, dropout", config_of("sage", 2, 5, 0.5f, 0.5f, true, true), 7, false},
      ModelCase{"sage, three layers, no bias", config_of("sage", 3, 6, 0.2f, 0.0f, false, false), 3, true});
  const std::uint64_t seed = test::case_seed(std::hash<std::string>{}(mc.name));
  CAPTURE(mc.name, seed);
  const std::int64_t n = 14, classes = 3;
  const graph::CsrGraph g = test::random_graph(seed, n, 30, mc.symmetric);
  GraphOperators ops = build_graph_operators(g, mc.config.kind);
  Model model(mc.config, mc.in_dim, classes, seed, ops);

  RandomStream rng(seed, 1);
  ReferenceModel ref;
  ref.config = mc.config;
  ref.aggregation = reference_operator(g, mc.config.kind);
  for (Parameter* p : model.parameters()) {
    Dense value = test::random_dense(rng, p->value.rows(), p->value.cols(), 0.8);
    if (p->name.find("gamma") != std::string::npos)
      for (double& v : value.v) v += 1.0;
    p->value.copy_from(test::to_tensor(value).view());
    ref.params[p->name] = value;
  }
  Dense x = test::random_dense(rng, n, mc.in_dim);
  const kernels::Tensor features = test::to_tensor(x);
  std::vector<std::int64_t> labels(static_cast<std::size_t>(n)), train_rows;
  for (std::int64_t i = 0; i < n; ++i) {
    labels[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(rng.below(classes));
    if (i % 3 != 1) train_rows.push_back(i);
  }
  Step step;
  step.seed = seed;
  step.epoch = 5;
  // The dropout masks, straight from the kernel with the key the model must use.
  for (int i = 0; i < mc.config.layers; ++i) {
    const float p = i == 0 ? mc.config.input_dropout : mc.config.dropout;
    const std::int64_t width = i == 0 ? mc.in_dim : mc.config.hidden;
    if (p == 0.0f) {
      ref.masks.emplace_back();
      continue;
    }
    Dense ones(n, width, 1.0);
    kernels::Tensor mask = test::to_tensor(ones);
    kernels::dropout_forward(mask.view(), mask.view(), p, {step.seed, step.epoch, static_cast<std::uint32_t>(i)}, {});
    ref.masks.push_back(test::to_dense(mask));
  }

  model.zero_grad();
  const kernels::Tensor logits = model.forward(features, step);
  const Dense expected_logits = ref.forward(x, true);
  const double forward_error = test::max_relative_error(test::to_dense(logits), expected_logits);
  kernels::Tensor grad = kernels::Tensor::full(n, classes, std::nanf(""));
  const kernels::IndexView mask{train_rows.data(), static_cast<std::int64_t>(train_rows.size())};
  const kernels::LossSum loss = kernels::log_softmax_nll(logits.view(), labels.data(), mask,
                                                         1.0f / static_cast<float>(train_rows.size()), grad.view());
  CHECK(loss.loss_sum / static_cast<double>(loss.count) ==
        Approx(test::naive_mean_nll(expected_logits, labels, train_rows)).epsilon(1e-5));
  model.backward(std::move(grad), step);

  std::map<std::string, Dense> differences;
  double largest = 0.0;
  for (Parameter* p : model.parameters()) {
    differences[p->name] = test::finite_difference(
        ref.params[p->name], [&] { return test::naive_mean_nll(ref.forward(x, true), labels, train_rows); });
    for (double v : differences[p->name].v) largest = std::max(largest, std::abs(v));
  }
  double worst = 0.0;
  for (Parameter* p : model.parameters()) {
    // Gradients near 0 are measured against the scale of the model's gradients.
    const double error = test::max_relative_error(test::to_dense(p->grad), differences[p->name], 1e-3 * largest);
    CAPTURE(p->name, error);
    CHECK(error < 1e-3);
    worst = std::max(worst, error);
  }
  CAPTURE(forward_error, worst);
  CHECK(forward_error < 1e-5);
  CHECK_THROWS_WITH(model.backward(kernels::Tensor::zeros(n, classes), step), Catch::Contains("training forward"));

  // Evaluation: no dropout, batch norm on the running statistics the training forward left.
  ref.forward(x, true);
  ref.running_mean = ref.batch_mean;
  ref.running_var = ref.batch_var;
  for (std::size_t i = 0; i < ref.running_mean.size(); ++i)
    for (std::size_t j = 0; j < ref.running_mean[i].size(); ++j) {
      ref.running_mean[i][j] = 0.1 * ref.batch_mean[i][j];
      ref.running_var[i][j] = 0.9 + 0.1 * ref.batch_var[i][j] * static_cast<double>(n) / static_cast<double>(n - 1);
    }
  Step eval = step;
  eval.training = false;
  const kernels::Tensor eval_logits = model.forward(features, eval);
  CHECK(test::max_relative_error(test::to_dense(eval_logits), ref.forward(x, false)) < 1e-5);
  CHECK_THROWS_AS(model.backward(kernels::Tensor::zeros(n, classes), eval), InvalidArgument);
}

TEST_CASE("Model::activation_bytes is the peak a training step allocates", "[train]") {
  const ModelCase mc = GENERATE(
      ModelCase{"gcn", config_of("gcn", 2, 16, 0.5f, 0.5f, false, true), 100, true},
      ModelCase{"gcn wide", config_of("gcn", 3, 64, 0.5f, 0.0f, true, true), 20, false},
      ModelCase{"sage", config_of("sage", 3, 32, 0.5f, 0.5f, true, true), 50, false},
      ModelCase{"gat", config_of("gat", 2, 8, 0.6f, 0.6f, false, true), 40, false},
      ModelCase{"gat with batch norm", config_of("gat", 3, 4, 0.5f, 0.0f, true, true), 12, true},
      ModelCase{"gat recomputing its layers", recomputing(config_of("gat", 3, 8, 0.6f, 0.6f, false, true), "layer"), 40,
                false},
      ModelCase{"gcn recomputing its layers", recomputing(config_of("gcn", 3, 64, 0.5f, 0.0f, false, true), "layer"),
                20, false},
      // bfloat16 activations: the hidden outputs (an odd width, padded), Â·x (20 -> 64 and 12 -> 32
      // aggregate first), with batch norm.
      ModelCase{"gcn bf16", in_bf16(config_of("gcn", 2, 16, 0.5f, 0.5f, false, true)), 100, true},
      ModelCase{"gcn bf16 aggregating first", in_bf16(config_of("gcn", 3, 64, 0.5f, 0.5f, true, true)), 20, false},
      ModelCase{"sage bf16", in_bf16(config_of("sage", 3, 33, 0.5f, 0.5f, false, true)), 50, false},
      ModelCase{"sage bf16 aggregating first", in_bf16(config_of("sage", 2, 32, 0.0f, 0.5f, true, true)), 12, true},
      ModelCase{"gat bf16", in_bf16(config_of("gat", 3, 8, 0.6f, 0.6f, false, true)), 40, false});
  CAPTURE(mc.name);
  const std::int64_t n = 500, classes = 7;
  const graph::CsrGraph g = test::random_graph(test::case_seed(21), n, 3000, mc.symmetric);
  GraphOperators ops = build_graph_operators(g, mc.config.kind);
  Model model(mc.config, mc.in_dim, classes, 1, ops);
  RandomStream rng(test::case_seed(22), 0);
  Dense x = test::random_dense(rng, n, mc.in_dim);
  const kernels::Tensor features = test::to_tensor(x);
  std::vector<std::int64_t> labels(static_cast<std::size_t>(n), 1), rows{0, 1, 2};
  Step step;

  const kernels::Device cpu = kernels::Device::cpu();
  const std::int64_t before = kernels::tensor_bytes_in_use(cpu);
  kernels::reset_tensor_peak_bytes(cpu);
  // A training step as the trainer takes it: the loss's gradient written, the logits let go.
  kernels::Tensor logits = model.forward(features, step);
  kernels::Tensor grad = kernels::Tensor::empty(n, classes);
  kernels::log_softmax_nll(logits.view(), labels.data(), {rows.data(), 3}, 1.0f / 3, grad.view());
  logits = kernels::Tensor();
  model.backward(std::move(grad), step);
  const std::int64_t used = kernels::tensor_peak_bytes(cpu) - before;
  const std::int64_t estimate = model.activation_bytes(n);
  CAPTURE(used, estimate);
  // Exact: the walk is the step's own sequence of allocations. (Batch norm's statistics and
  // backward temporaries, a few floats per column, are the only tensors it leaves out; the
  // attention backward's packed rows, 4 · heads floats per vertex, are host memory beside the
  // tensors, in the walk but not in the tensors' peak, which meets them when GAT recomputes its
  // layers.)
  const std::int64_t attention_pack = mc.config.kind == "gat" ? n * 4 * mc.config.heads * 4 : 0;
  const std::int64_t norm_columns = 64 * 4 * 4 * mc.config.layers;
  CHECK(used <= estimate + (mc.config.batch_norm ? norm_columns : 0));
  CHECK(used >= estimate - norm_columns - attention_pack);
  // Nothing is kept once backward is done but batch norm's statistics.
  CHECK(kernels::tensor_bytes_in_use(cpu) - before <= 4096);
}

TEST_CASE("Model::activation_bytes walks the step and takes dropout in place after ReLU", "[train]") {
  GraphOperators ops = build_graph_operators(test::random_graph(3, 10, 20, true), "gcn");
  // GCN 100 -> 16 -> 7 with dropout, both convs transforming first (no Â·x kept). The input
  // dropout acts as conv0 reads the features, chunk by chunk through a scratch of 4 MiB (10,485
  // rows of 100), so nothing dropped is kept but the mask's bits, 16 bytes a row (a flag and 13
  // bytes of bits, padded), until conv0's backward. Forward keeps conv0's ReLU output (16), which
  // conv1's dropout overwrites in place. With 100,000 vertices the peak is in conv1's backward:
  // that output, the logits' gradient (7) until Âᵀ·g (7) is written, then Âᵀ·g and its product
  // with Wᵀ (16).
  const Model gcn(config_of("gcn", 2, 16, 0.5f, 0.5f, false, true), 100, 7, 1, ops);
  REQUIRE(gcn.shape().drops_while_reading(0));
  CHECK(gcn.activation_bytes(100000) == std::int64_t{100000} * (4 * (16 + 7 + 16) + 16));
  // With 1,000 the scratch is all 1,000 rows: conv0's forward holds it beside x · W (16).
  CHECK(gcn.activation_bytes(1000) == 1000 * (4 * (100 + 16) + 16));
  // Without dropout, 8 -> 16 aggregates first (keeps Â·x, 8), batch norm keeps the conv output
  // (16) and its statistics (2 x 16 floats) beside the ReLU output (16); the peak is again in
  // conv1's backward, with Âᵀ·g (7) and the gradient of conv0's output (16).
  const Model bn(config_of("gcn", 2, 16, 0.0f, 0.0f, true, true), 8, 7, 1, ops);
  CHECK(bn.activation_bytes(1000) == 1000 * 4 * (8 + 16 + 16 + 7 + 16) + 2 * 16 * 4);
}

TEST_CASE("Model's dropout in place on the ReLU output gives the gradients of a dropped copy bitwise", "[train]") {
  const std::string kind = GENERATE(as<std::string>{}, "gcn", "sage");
  const bool batch_norm = GENERATE(false, true);
  CAPTURE(kind, batch_norm);
  const std::int64_t n = 60, in_dim = 12, classes = 5;
  const std::uint64_t seed = test::case_seed(std::hash<std::string>{}(kind) + (batch_norm ? 1 : 0));
  const ModelConfig config = config_of(kind, 3, 12, 0.5f, 0.25f, batch_norm, true);
  GraphOperators ops = build_graph_operators(test::random_graph(seed, n, 400, false), kind);
  Model model(config, in_dim, classes, seed, ops);

  // The same stack from separate layers, each dropout writing a new tensor as a plain
  // dropout -> conv -> [batch norm] -> ReLU network does, ReLU's backward reading the undropped output.
  std::vector<std::unique_ptr<GraphConv>> convs;
  std::vector<std::unique_ptr<BatchNorm>> norms;
  std::vector<Parameter*> reference_parameters;
  for (int i = 0; i < 3; ++i) {
    const std::int64_t in = i == 0 ? in_dim : 12, out = i == 2 ? classes : 12;
    const bool norm = batch_norm && i < 2;
    if (kind == "gcn")
      convs.push_back(std::make_unique<GcnConv>(*ops.gcn, in, out, !norm, "conv" + std::to_string(i)));
    else
      convs.push_back(std::make_unique<SageConv>(*ops.mean, in, out, !norm, "conv" + std::to_string(i)));
    convs.back()->set_input_grad(i > 0);
    for (Parameter* p : convs.back()->parameters()) reference_parameters.push_back(p);
    norms.push_back(norm ? std::make_unique<BatchNorm>(out, "bn" + std::to_string(i)) : nullptr);
    if (norm)
      for (Parameter* p : norms.back()->parameters()) reference_parameters.push_back(p);
  }
  const std::vector<Parameter*> parameters = model.parameters();
  const SharedStep shared = shared_step(model, reference_parameters, seed, n, in_dim, classes, 3, 0.8);
  const kernels::Tensor& logits = shared.logits;

  const kernels::Tensor reference_logits =
      reference_step(convs, norms, {0.25f, 0.5f, 0.5f}, ActivationKind::relu, shared);

  CHECK(test::to_dense(logits).v == test::to_dense(reference_logits).v);
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    CAPTURE(parameters[k]->name);
    CHECK(test::to_dense(parameters[k]->grad).v == test::to_dense(reference_parameters[k]->grad).v);
  }
}

namespace {

// One training step of a fresh Model of `config` on a random graph of n vertices and `in_dim`
// features (seeded by `seed`; with features_in_bf16 rounded to bfloat16 first): its logits, every
// parameter's gradient, the tensors' peak during the step and the plan's activation bytes.
struct RecordedStep {
  std::vector<double> logits;
  std::vector<std::vector<double>> grads;
  std::vector<std::string> names;  // the parameters'
  std::int64_t peak = 0, planned = 0;
};

RecordedStep record_step(const ModelConfig& config, std::int64_t n, std::int64_t entries, std::int64_t in_dim,
                         std::int64_t classes, std::uint64_t seed, bool features_in_bf16 = false) {
  GraphOperators ops = build_graph_operators(test::random_graph(seed, n, entries, false), config.kind);
  RandomStream rng(seed, 1);
  Dense x = test::random_dense(rng, n, in_dim);
  if (features_in_bf16)
    for (double& v : x.v) v = bfloat16_to_float(float_to_bfloat16(static_cast<float>(v)));
  const kernels::Tensor features = test::to_tensor(x);
  const LossTask task(rng, n, classes, 3);
  const Step step = training_step(seed, 2);
  const kernels::Device cpu = kernels::Device::cpu();
  Model model(config, in_dim, classes, seed, ops);
  RecordedStep r;
  r.planned = model.activation_bytes(n);
  const std::int64_t before = kernels::tensor_bytes_in_use(cpu);
  kernels::reset_tensor_peak_bytes(cpu);
  const kernels::Tensor logits = model.forward(features, step);
  model.zero_grad();
  r.logits = test::to_dense(logits).v;
  model.backward(task.gradient(logits), step);
  r.peak = kernels::tensor_peak_bytes(cpu) - before;
  for (Parameter* p : model.parameters()) {
    r.grads.push_back(test::to_dense(p->grad).v);
    r.names.push_back(p->name);
  }
  return r;
}

}  // namespace

TEST_CASE("Model recomputing Â·x in backward gives the gradients of the kept Â·x bitwise and holds less",
          "[train]") {
  const std::string kind = GENERATE(as<std::string>{}, "gcn", "sage");
  const std::string recompute = GENERATE(as<std::string>{}, "aggregation", "layer");
  const float input_dropout = GENERATE(0.0f, 0.2f);
  CAPTURE(kind, recompute, input_dropout);
  const std::int64_t n = 80, in_dim = 6;
  const std::uint64_t seed = test::case_seed(std::hash<std::string>{}(kind) + 7);
  // 6 -> 16 aggregates first; 16 -> 16 and 16 -> 4 transform first.
  const ModelConfig config = config_of(kind, 3, 16, 0.5f, input_dropout, false, true);
  const RecordedStep kept = record_step(config, n, 500, in_dim, 4, seed);
  const RecordedStep recomputed = record_step(recomputing(config, recompute), n, 500, in_dim, 4, seed);
  CHECK(recomputed.logits == kept.logits);
  CHECK(recomputed.grads == kept.grads);
  CAPTURE(kept.peak, kept.planned, recomputed.peak, recomputed.planned);
  // Â·x (n x 6 floats) is no longer held through the peak, in the plan and in the tensors; but a
  // GCN layer keeping Â·x lets its dropped input go after forward, which recomputing must keep
  // instead: the same bytes.
  const std::int64_t saved = kind == "gcn" && input_dropout > 0.0f ? 0 : n * in_dim * 4;
  CHECK(recomputed.planned == kept.planned - saved);
  CHECK(recomputed.peak == kept.peak - saved);
}

TEST_CASE("Model with bf16 activations moves its gradients no more than rounding the features to bf16 does",
          "[train]") {
  const std::string kind = GENERATE(as<std::string>{}, "gcn", "sage", "gat");
  const bool batch_norm = GENERATE(false, true);
  // GCN's and GraphSAGE's first layer aggregates first, or not; GAT's always transforms first.
  const std::int64_t in_dim = GENERATE(as<std::int64_t>{}, 6, 40);
  CAPTURE(kind, batch_norm, in_dim);
  const std::int64_t n = 150, classes = 5;
  const std::uint64_t seed = test::case_seed(std::hash<std::string>{}(kind) + 11 + static_cast<std::uint64_t>(in_dim));
  ModelConfig config = config_of(kind, 3, 24, 0.5f, 0.3f, batch_norm, true);
  config.heads = 2;  // GAT: 2 heads of 24, 48 columns between layers
  const RecordedStep whole = record_step(config, n, 900, in_dim, classes, seed);
  const RecordedStep halved = record_step(in_bf16(config), n, 900, in_dim, classes, seed);
  // The reference: the float32 model on the features rounded to bfloat16, one rounding of the same
  // size (2^-9 relative) at the input alone. How far that moves the gradients is the step's own
  // conditioning (a random model's gradients are sums that cancel: GraphSAGE's move by up to ~10 %);
  // keeping every activation in bfloat16 rounds once per layer, so it may move them a few times as far.
  const RecordedStep rounded = record_step(config, n, 900, in_dim, classes, seed, true);
  // The norm of the difference, relative to the norm of the float32 values.
  const auto relative_error = [](const std::vector<double>& got, const std::vector<double>& want) {
    double diff = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      diff += (got[i] - want[i]) * (got[i] - want[i]);
      scale += want[i] * want[i];
    }
    return std::sqrt(diff / scale);
  };
  CHECK(halved.logits != whole.logits);  // the rounding did act
  CHECK(relative_error(halved.logits, whole.logits) < 1e-2);
  const double rounding = 1.0 / 256;  // twice bfloat16's relative rounding, a floor for well-conditioned steps
  // Per parameter, except GAT's attention vectors, measured with their layer's weight: their
  // gradients are sums whose terms cancel (the softmax's gradient sums to zero over each row), so
  // rounding the layer's input moves them by more relative to their own small norm (measured: up
  // to 7x the reference with batch norm, where the weight's moves 2x).
  const auto group = [&](const RecordedStep& r, std::size_t k) {
    std::vector<double> values = r.grads[k];
    for (std::size_t a = 0; a < r.names.size(); ++a) {
      const std::string& name = r.names[a];
      const std::size_t dot = name.find(".att_");
      if (dot != std::string::npos && name.substr(0, dot) + ".weight" == r.names[k])
        values.insert(values.end(), r.grads[a].begin(), r.grads[a].end());
    }
    return values;
  };
  for (std::size_t k = 0; k < whole.grads.size(); ++k) {
    if (whole.names[k].find(".att_") != std::string::npos) continue;  // with its layer's weight
    const double moved = relative_error(group(halved, k), group(whole, k));
    const double reference = relative_error(group(rounded, k), group(whole, k));
    CAPTURE(whole.names[k], moved, reference);
    CHECK(moved <= 3 * std::max(reference, rounding));
  }
  CAPTURE(whole.peak, whole.planned, halved.peak, halved.planned);
  CHECK(halved.peak < whole.peak);
  CHECK(halved.planned < whole.planned);
  // The plan is still the step's own peak (up to the logits this test keeps through backward,
  // batch norm's per-column temporaries, and GAT's packed rows of the attention backward: 4 · heads
  // floats per vertex of host memory that the tensors' peak does not see).
  const std::int64_t width = kind == "gat" ? 48 : 24;
  const std::int64_t norm_columns = batch_norm ? 2 * 8 * width * 4 : 0;
  const std::int64_t attention_pack = kind == "gat" ? n * 4 * config.heads * 4 : 0;
  CHECK(halved.peak <= halved.planned + n * classes * 4 + norm_columns);
  CHECK(halved.peak >= halved.planned - norm_columns - attention_pack);
}

TEST_CASE("GAT dropping each input as its layer reads it gives the logits and gradients of dropped copies", "[train]") {
  // 4,096 features: conv0 reads them in three chunks of 256 rows (the last of 88), each dropped as
  // it is read, in forward and again for the weight's gradient; the hidden layers' 8 columns in
  // one chunk. The reference drops every input into a tensor of its own first.
  const bool residual = GENERATE(false, true);
  CAPTURE(residual);
  const std::int64_t n = 600, in_dim = 4096, classes = 4;
  ModelConfig config = config_of("gat", 3, 4, 0.5f, 0.6f, false, true);
  config.heads = 2;
  config.attention_dropout = 0.3f;
  config.residual = residual;
  const std::uint64_t seed = test::case_seed(residual ? 93 : 92);
  GraphOperators ops = build_graph_operators(test::random_graph(seed, n, 4000, false), "gat");
  Model model(config, in_dim, classes, seed, ops);
  const ModelShape& shape = model.shape();
  for (int i = 0; i < 3; ++i) REQUIRE(shape.drops_while_reading(i));

  std::vector<std::unique_ptr<GraphConv>> convs;
  std::vector<Parameter*> reference_parameters;
  for (int i = 0; i < 3; ++i) {
    GatConvOptions o;
    o.heads = shape.layer_heads(i);
    o.out_per_head = shape.head_width(i);
    o.concat = i < 2;
    o.negative_slope = config.negative_slope;
    o.attention_dropout = config.attention_dropout;
    o.residual = residual;
    o.layer = static_cast<std::uint32_t>(i);
    convs.push_back(std::make_unique<GatConv>(*ops.attention, shape.layer_in(i), o, "conv" + std::to_string(i)));
    convs.back()->set_input_grad(i > 0);
    for (Parameter* p : convs.back()->parameters()) reference_parameters.push_back(p);
  }
  const std::vector<Parameter*> parameters = model.parameters();
  const SharedStep shared = shared_step(model, reference_parameters, seed, n, in_dim, classes, 4, 0.3);
  const kernels::Tensor& logits = shared.logits;

  const kernels::Tensor reference_logits = reference_step(convs, std::vector<std::unique_ptr<BatchNorm>>(3),
                                                          {0.6f, 0.5f, 0.5f}, ActivationKind::elu, shared);

  // Each row's products are its own, so the logits agree to float32 rounding of the chunk's GEMM
  // shape; the weight gradients sum conv0's rows chunk by chunk, one more rounding per chunk.
  CHECK(test::max_relative_error(test::to_dense(logits), test::to_dense(reference_logits)) < 1e-5);
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    CAPTURE(parameters[k]->name);
    const Dense want = test::to_dense(reference_parameters[k]->grad);
    double largest = 0.0;
    for (const double v : want.v) largest = std::max(largest, std::abs(v));
    CHECK(test::max_relative_error(test::to_dense(parameters[k]->grad), want, 1e-3 * largest) < 1e-5);
  }
}

TEST_CASE("GAT recomputing x·W and its scores in backward gives the kept gradients bitwise and holds less",
          "[train]") {
  const bool residual = GENERATE(false, true);
  CAPTURE(residual);
  const std::int64_t n = 120, classes = 4;
  ModelConfig config = config_of("gat", 3, 8, 0.5f, 0.3f, false, true);
  config.heads = 4;
  config.residual = residual;
  const std::uint64_t seed = test::case_seed(residual ? 91 : 90);
  const RecordedStep kept = record_step(config, n, 900, 10, classes, seed);
  const RecordedStep recomputed = record_step(recomputing(config, "layer"), n, 900, 10, classes, seed);
  CHECK(recomputed.logits == kept.logits);
  CHECK(recomputed.grads == kept.grads);
  CAPTURE(kept.peak, kept.planned, recomputed.peak, recomputed.planned);
  // Less held, in the plan and in the tensors, and the plan still the step's own peak (up to the
  // logits this test keeps through backward, and the attention backward's packed rows, 4 · heads
  // floats per vertex of host memory that the tensors' peak does not see).
  CHECK(recomputed.planned < kept.planned);
  CHECK(recomputed.peak < kept.peak);
  const std::int64_t logits = n * classes * 4, attention_pack = n * 4 * config.heads * 4;
  CHECK(recomputed.peak <= recomputed.planned + logits);
  CHECK(recomputed.peak >= recomputed.planned - attention_pack);
}

TEST_CASE("ModelShape gives the parameters and layer order of the Model built from it, without building it",
          "[train]") {
  const std::string kind = GENERATE(as<std::string>{}, "gcn", "sage", "gat");
  const int layers = GENERATE(1, 2, 3);
  const bool batch_norm = GENERATE(false, true);
  const bool bias = GENERATE(false, true);
  const std::int64_t in_dim = GENERATE(5, 40);
  const bool residual = GENERATE(false, true) && kind == "gat";
  CAPTURE(kind, layers, batch_norm, bias, in_dim, residual);
  GraphOperators ops = build_graph_operators(test::random_graph(5, 10, 20, true), kind);
  ModelConfig c = config_of(kind, layers, 16, 0.5f, 0.0f, batch_norm, bias);
  c.residual = residual;
  const ModelShape shape(c, in_dim, 3);
  Model model(c, in_dim, 3, 1, ops);
  std::int64_t values = 0;
  for (const Parameter* p : model.parameters()) values += p->value.numel();
  CHECK(shape.parameter_bytes() == values * 4);
  CHECK(shape.aggregates_first(0) == model.first_layer_aggregates_first());
}

TEST_CASE("ModelShape counts the attention backward's workspace of the device it trains on", "[train]") {
  // GAT 2 layers of 8 heads x 8 on 4000 vertices: the backward of the first layer holds its
  // kernel's workspace beside its gradients, 4 H floats a row on the CPU, H on a GPU; and the CPU
  // keeps the bits of the input's dropout mask, which a GPU draws again on every read.
  const ModelConfig gat = config_of("gat", 2, 8, 0.6f, 0.6f, false, true);
  const std::int64_t n = 4000;
  const ModelShape cpu(gat, 16, 7), gpu(gat, 16, 7, kernels::Device::cuda());
  CHECK(cpu.device() == kernels::Device::cpu());
  CHECK(gpu.device() == kernels::Device::cuda());
  const std::int64_t difference = cpu.activation_bytes(n) - gpu.activation_bytes(n);
  CHECK(difference > 0);
  CHECK(difference <= n * 3 * gat.heads * 4 + remembered_dropout_bytes(n, 16, kernels::Device::cpu()));
  CHECK(difference > n * 3 * gat.heads * 4 / 2);
  CHECK(kernels::attention_workspace_width(8, false) == 32);
  CHECK(kernels::attention_workspace_width(8, true) == 8);
  // GCN has no such workspace: the same bytes on both.
  const ModelConfig gcn = config_of("gcn", 3, 64, 0.5f, 0.0f, false, true);
  CHECK(ModelShape(gcn, 500, 7).activation_bytes(n) ==
        ModelShape(gcn, 500, 7, kernels::Device::cuda()).activation_bytes(n));
}

TEST_CASE("Model refuses bad configurations and missing operators", "[train]") {
  GraphOperators gcn_ops = build_graph_operators(test::random_graph(4, 10, 20, true), "gcn");
  CHECK_THROWS_WITH(Model(config_of("sage", 2, 8, 0.5f, 0.5f, false, true), 4, 3, 1, gcn_ops),
                    Catch::Contains("mean"));
  CHECK_THROWS_WITH(Model(config_of("gat", 2, 8, 0.5f, 0.5f, false, true), 4, 3, 1, gcn_ops), Catch::Contains("gat"));
  CHECK_THROWS_AS(Model(config_of("gcn", 0, 8, 0.5f, 0.5f, false, true), 4, 3, 1, gcn_ops), InvalidArgument);
  CHECK_THROWS_AS(Model(config_of("gcn", 2, 8, 1.0f, 0.5f, false, true), 4, 3, 1, gcn_ops), InvalidArgument);
  CHECK_THROWS_AS(Model(config_of("gcn", 2, 8, 0.5f, 0.5f, false, true), 0, 3, 1, gcn_ops), InvalidArgument);
  ModelConfig f16 = config_of("gcn", 2, 8, 0.5f, 0.5f, false, true);
  f16.activation_dtype = "f16";
  CHECK_THROWS_WITH(Model(f16, 4, 3, 1, gcn_ops), Catch::Contains("'f16'"));
  Model model(config_of("gcn", 2, 8, 0.5f, 0.5f, false, true), 4, 3, 1, gcn_ops);
  Step step;
  CHECK_THROWS_WITH(model.backward(kernels::Tensor::zeros(10, 3), step), Catch::Contains("training forward"));
  CHECK_THROWS_WITH(model.forward(kernels::Tensor::zeros(10, 5), step), Catch::Contains("5 columns"));
}
