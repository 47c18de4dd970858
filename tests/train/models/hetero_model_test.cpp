// Tests of train/models/hetero_model.*: the model's structure (names, decay groups, bases per layer,
// initialisation from the seed), its forward and backward through log_softmax_nll against a
// float64 R-GCN written edge by edge and central finite differences (dense parameters and
// embedding tables, with dropout keyed on global ids), the sparse update leaving rows outside the
// target's receptive field untouched, results that do not depend on the thread count beyond
// float32 rounding, training on the training rows' logits alone, streamed tables against resident
// ones, the memory estimate, and misuse.
#include "train/models/hetero_model.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/build.hpp"
#include "kernels/dropout.hpp"
#include "kernels/loss.hpp"
#include "tests/reference/naive_csr.hpp"
#include "tests/reference/naive_hgt.hpp"
#include "tests/reference/naive_rgat.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/support/thread_count.hpp"
#include "tests/train/gradient_check.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::Dense;
using kernels::Tensor;

namespace {

graph::CsrGraph csr(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& dst,
                    const std::vector<std::int64_t>& src) {
  return graph::csr_from_coo<std::int64_t>(rows, cols, dst.data(), src.data(), nullptr,
                                           static_cast<std::int64_t>(dst.size()));
}

//   authors a0 a1 a2 (no features), papers p0 p1 p2 (features, labelled), subjects s0 s1 (no
//   features):
//
//     a0 ──writes──▶ p0 ◀──writes── a1 ──writes──▶ p1          a2 writes nothing
//     p0 ──cites───▶ p1 ◀──cites─── p2
//     p0, p1 ──has_subject──▶ s0                     p2 ──has_subject──▶ s1
//
//   and the reverses rev_writes, rev_cites and rev_has_subject.
graph::HeteroGraph hand_drawn_graph() {
  graph::HeteroGraph g;
  g.add_vertex_type("author", 3);
  g.add_vertex_type("paper", 3);
  g.add_vertex_type("subject", 2);
  g.add_relation({"author", "writes", "paper"}, csr(3, 3, {0, 0, 1}, {0, 1, 1}));
  g.add_relation({"paper", "cites", "paper"}, csr(3, 3, {1, 1}, {0, 2}));
  g.add_relation({"paper", "has_subject", "subject"}, csr(2, 3, {0, 0, 1}, {0, 1, 2}));
  g.add_reverse_relations();
  return g;
}
constexpr int author = 0, paper = 1, subject = 2;

// A random graph of four types, one of them without vertices, with relations between and within
// types (repeated edges, rows without entries) and their reverses.
graph::HeteroGraph random_hetero_graph(std::uint64_t seed) {
  const auto relation = [&](std::uint64_t k, std::int64_t rows, std::int64_t cols, std::int64_t edges) {
    const test::NaiveCoo coo = test::random_coo(stream_id(seed, k), rows, cols, edges);
    return graph::csr_from_coo<std::int64_t>(rows, cols, coo.rows.data(), coo.cols.data(), nullptr, edges);
  };
  graph::HeteroGraph g;
  g.add_vertex_type("paper", 300);
  g.add_vertex_type("author", 400);
  g.add_vertex_type("field", 50);
  g.add_vertex_type("venue", 0);
  g.add_relation({"author", "writes", "paper"}, relation(1, 300, 400, 900));
  g.add_relation({"paper", "cites", "paper"}, relation(2, 300, 300, 1200));
  g.add_relation({"paper", "has_topic", "field"}, relation(3, 50, 300, 600));
  g.add_relation({"paper", "appears_in", "venue"}, csr(0, 300, {}, {}));
  g.add_reverse_relations();
  return g;
}

// random_hetero_graph's papers with 24 random features and a random label among 5 each; with
// every > 0, every every-th paper labelled for the loss (rows).
struct RandomProblem {
  graph::HeteroGraph g;
  RgcnGraph rg;
  Tensor features;
  std::vector<std::int64_t> labels, rows;

  RandomProblem(std::uint64_t seed, std::int64_t every) : g(random_hetero_graph(seed)), rg(g) {
    RandomStream rng(seed, 1);
    Dense x = test::random_dense(rng, 300, 24);
    features = test::to_tensor(x);
    labels.resize(300);
    for (std::int64_t i = 0; i < 300; ++i) {
      labels[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(rng.below(5));
      if (every > 0 && i % every == 0) rows.push_back(i);
    }
  }
};

// The global id of a type's vertex i: the vertex counts of the types before it, plus i.
std::vector<std::int64_t> global_ids(const graph::HeteroGraph& g, int type) {
  std::int64_t offset = 0;
  for (int t = 0; t < type; ++t) offset += g.vertex_count(t);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(g.vertex_count(type)));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = offset + static_cast<std::int64_t>(i);
  return ids;
}

// R-GCN by its formula in float64, one destination vertex and one edge at a time: per layer and
// type t, y_t[i] = x_t[i] · W_root,t + b_t + Σ_{r into t} (1 / c_{i,r}) Σ_{entries j of row i in r}
// x_src[j] · W_r, then (unless last) ReLU; W_r = Σ_b comp[r, b] · V_b with bases. Inputs: the
// features, or the tables, by type; parameters and tables by name. A layer computes the types it
// has roots for (the model leaves out what does not reach the target); comp has a row per
// relation into them.
struct ReferenceRgcn {
  const graph::HeteroGraph* g = nullptr;
  HeteroModelConfig config;
  std::vector<bool> layer_bases;
  std::map<std::string, Dense> params;    // dense parameters and "embedding.<type>" by name
  std::map<std::string, Dense> features;  // by type name
  std::map<std::pair<int, int>, Dense> masks;  // (layer, type): the dropout mask scaled by 1/(1-p)

  bool computed(int layer, int t) const {
    return params.count("conv" + std::to_string(layer) + ".root." + g->vertex_type_name(t)) != 0;
  }

  Dense relation_weight(int layer, int r) const {
    const std::string conv = "conv" + std::to_string(layer);
    if (!layer_bases[static_cast<std::size_t>(layer)]) return params.at(conv + ".weight." + g->relation_type(r).key());
    const Dense& bases = params.at(conv + ".bases");
    const Dense& comp = params.at(conv + ".comp");
    std::int64_t row = 0;  // r's row of comp
    for (int q = 0; q < r; ++q) row += computed(layer, g->vertex_type(g->relation_type(q).dst)) ? 1 : 0;
    const std::int64_t in = bases.rows / comp.cols;
    Dense w(in, bases.cols);
    for (std::int64_t b = 0; b < comp.cols; ++b)
      for (std::int64_t i = 0; i < in; ++i)
        for (std::int64_t j = 0; j < bases.cols; ++j) w.at(i, j) += comp.at(row, b) * bases.at(b * in + i, j);
    return w;
  }

  // The last layer's output of every type it computes (empty for the others).
  std::vector<Dense> forward(bool training) const {
    const int types = g->num_vertex_types();
    std::vector<Dense> x;
    for (int t = 0; t < types; ++t) {
      const std::string& name = g->vertex_type_name(t);
      x.push_back(features.count(name) != 0 ? features.at(name) : params.at("embedding." + name));
    }
    for (int layer = 0; layer < config.layers; ++layer) {
      const std::string conv = "conv" + std::to_string(layer);
      if (training)
        for (int t = 0; t < types; ++t)
          if (masks.count({layer, t}) != 0)
            x[static_cast<std::size_t>(t)] = test::multiply(x[static_cast<std::size_t>(t)], masks.at({layer, t}));
      std::vector<Dense> y;
      for (int t = 0; t < types; ++t) {
        const std::string& name = g->vertex_type_name(t);
        if (!computed(layer, t)) {
          y.emplace_back();
          continue;
        }
        Dense yt = test::matmul(x[static_cast<std::size_t>(t)], params.at(conv + ".root." + name));
        if (config.bias) yt = test::add_row(std::move(yt), params.at(conv + ".bias." + name));
        for (int r = 0; r < g->num_relations(); ++r) {
          if (g->vertex_type(g->relation_type(r).dst) != t) continue;
          const auto src = static_cast<std::size_t>(g->vertex_type(g->relation_type(r).src));
          const Dense xw = test::matmul(x[src], relation_weight(layer, r));
          const Dense adjacency = test::dense_matrix(g->relation(r));  // entry counts
          for (std::int64_t i = 0; i < yt.rows; ++i) {
            double c = 0.0;
            for (std::int64_t j = 0; j < adjacency.cols; ++j) c += adjacency.at(i, j);
            for (std::int64_t j = 0; j < adjacency.cols; ++j)
              for (std::int64_t k = 0; k < yt.cols && adjacency.at(i, j) != 0.0; ++k)
                yt.at(i, k) += adjacency.at(i, j) / c * xw.at(j, k);
          }
        }
        y.push_back(layer + 1 < config.layers ? test::relu(std::move(yt)) : std::move(yt));
      }
      x = std::move(y);
    }
    return x;
  }
};

HeteroModelConfig config_of(int layers, std::int64_t hidden, float dropout, float input_dropout, int num_bases,
                          bool bias, std::int64_t embedding_dim) {
  HeteroModelConfig c;
  c.layers = layers;
  c.hidden = hidden;
  c.dropout = dropout;
  c.input_dropout = input_dropout;
  c.num_bases = num_bases;
  c.bias = bias;
  c.embedding_dim = embedding_dim;
  return c;
}

struct ModelCase {
  const char* name;
  HeteroModelConfig config;
  std::int64_t feature_dim;
};

// Paper features of the hand-drawn graph, random, and the model over them.
struct HandDrawn {
  graph::HeteroGraph g = hand_drawn_graph();
  RgcnGraph rg{g};
  Dense x;
  Tensor features;
  HeteroModel model;

  HandDrawn(const HeteroModelConfig& config, std::int64_t feature_dim, std::uint64_t seed, std::int64_t classes = 3)
      : x(random_x(seed, feature_dim)),
        features(test::to_tensor(x)),
        model(config, rg, {nullptr, &features, nullptr}, paper, classes, seed) {}

  static Dense random_x(std::uint64_t seed, std::int64_t cols) {
    RandomStream rng(seed, 2);
    return test::random_dense(rng, 3, cols);
  }
};

// HGT by its layers in float64: per-type input projections and ReLU, HGT layers (naive_hgt), the
// output projection of the papers; the dropout masks by (layer, type) as the model keys them
// (layer 0 the input projection, layer i + 1 HGT layer i, layer L + 1 the output projection).
struct ReferenceHgt {
  const graph::HeteroGraph* g = nullptr;
  HeteroModelConfig config;
  std::vector<std::string> names;         // the dense parameters, in the model's order
  std::map<std::string, Dense> params;    // dense parameters and "embedding.<type>" by name
  std::map<std::string, Dense> features;  // by type name
  std::map<std::pair<int, int>, Dense> masks;

  std::vector<Dense> layer_params(const std::string& prefix) const {
    std::vector<Dense> out;
    for (const std::string& n : names)
      if (n.rfind(prefix, 0) == 0) out.push_back(params.at(n));
    return out;
  }

  void drop(int layer, std::vector<Dense>& x) const {
    for (int t = 0; t < g->num_vertex_types(); ++t)
      if (masks.count({layer, t}) != 0)
        x[static_cast<std::size_t>(t)] = test::multiply(x[static_cast<std::size_t>(t)], masks.at({layer, t}));
  }

  Dense forward(bool training) const {
    const int types = g->num_vertex_types();
    std::vector<Dense> x;
    for (int t = 0; t < types; ++t) {
      const std::string& name = g->vertex_type_name(t);
      x.push_back(features.count(name) != 0 ? features.at(name) : params.at("embedding." + name));
    }
    if (training) drop(0, x);
    for (int t = 0; t < types; ++t) {
      const std::string w = "input." + g->vertex_type_name(t) + ".weight";
      Dense& xt = x[static_cast<std::size_t>(t)];
      xt = params.count(w) != 0 ? test::relu(test::add_row(test::matmul(xt, params.at(w)),
                                                           params.at("input." + g->vertex_type_name(t) + ".bias")))
                                : Dense(g->vertex_count(t), config.hidden);
    }
    const test::Relations relations = test::Relations::of(*g);
    const std::vector<std::int64_t> rows = test::offsets(relations.inputs);
    for (int layer = 0; layer < config.layers; ++layer) {
      if (training) drop(layer + 1, x);
      const std::string conv = "conv" + std::to_string(layer);
      Dense stacked(rows.back(), config.hidden);
      std::vector<int> outputs;
      for (int t = 0; t < types; ++t) {
        for (std::int64_t i = 0; i < g->vertex_count(t); ++i)
          for (std::int64_t c = 0; c < config.hidden; ++c)
            stacked.at(rows[static_cast<std::size_t>(t)] + i, c) = x[static_cast<std::size_t>(t)].at(i, c);
        if (params.count(conv + "." + g->vertex_type_name(t) + ".out.weight") != 0) outputs.push_back(t);
      }
      const Dense y =
          test::naive_hgt(relations, std::vector<std::int64_t>(static_cast<std::size_t>(types), config.hidden), stacked,
                          layer_params(conv + "."), config.hidden, config.heads, outputs);
      for (int t = 0; t < types; ++t)
        for (std::int64_t i = 0; i < g->vertex_count(t); ++i)
          for (std::int64_t c = 0; c < config.hidden; ++c)
            x[static_cast<std::size_t>(t)].at(i, c) = y.at(rows[static_cast<std::size_t>(t)] + i, c);
    }
    if (training) drop(config.layers + 1, x);
    return test::add_row(test::matmul(x[static_cast<std::size_t>(paper)], params.at("output.paper.weight")),
                         params.at("output.paper.bias"));
  }
};

// Relational GAT by its layers in float64 (naive_rgat), ReLU between them, with the feature and
// attention dropout masks the model must draw.
struct ReferenceRgat {
  const graph::HeteroGraph* g = nullptr;
  HeteroModelConfig config;
  std::int64_t classes = 3;
  std::vector<std::string> names;
  std::map<std::string, Dense> params;
  std::map<std::string, Dense> features;
  std::map<std::pair<int, int>, Dense> masks;

  Dense forward(bool training) const {
    const int types = g->num_vertex_types();
    std::vector<Dense> x;
    for (int t = 0; t < types; ++t) {
      const std::string& name = g->vertex_type_name(t);
      x.push_back(features.count(name) != 0 ? features.at(name) : params.at("embedding." + name));
    }
    const test::Relations relations = test::Relations::of(*g);
    const std::vector<std::int64_t> rows = test::offsets(relations.inputs);
    for (int layer = 0; layer < config.layers; ++layer) {
      const bool last = layer + 1 == config.layers;
      if (training)
        for (int t = 0; t < types; ++t)
          if (masks.count({layer, t}) != 0)
            x[static_cast<std::size_t>(t)] = test::multiply(x[static_cast<std::size_t>(t)], masks.at({layer, t}));
      const std::string conv = "conv" + std::to_string(layer) + ".";
      std::vector<Dense> layer_params;
      std::vector<int> outputs;
      for (const std::string& n : names) {
        if (n.rfind(conv, 0) != 0) continue;
        layer_params.push_back(params.at(n));
        for (int r = 0; r < g->num_relations(); ++r)
          if (n == conv + g->relation_type(r).key() + ".bias") outputs.push_back(g->vertex_type(g->relation_type(r).dst));
      }
      std::int64_t width = 0;
      std::vector<std::int64_t> in_dims;
      for (const Dense& xt : x) {
        in_dims.push_back(xt.cols);
        width = std::max(width, xt.cols);
      }
      Dense stacked(rows.back(), width);
      for (int t = 0; t < types; ++t)
        for (std::int64_t i = 0; i < g->vertex_count(t); ++i)
          for (std::int64_t c = 0; c < in_dims[static_cast<std::size_t>(t)]; ++c)
            stacked.at(rows[static_cast<std::size_t>(t)] + i, c) = x[static_cast<std::size_t>(t)].at(i, c);
      const std::int64_t heads = last ? config.out_heads : config.heads;
      const bool concat = !last || config.out_heads == 1;
      const Dense y = test::naive_rgat(relations, in_dims, stacked, layer_params, last ? classes : config.hidden, heads,
                                       concat, config.negative_slope, outputs,
                                       test::attention_keep(relations, training ? config.attention_dropout : 0.0f,
                                                            static_cast<std::uint32_t>(layer), seed, epoch));
      for (int t = 0; t < types; ++t) {
        Dense yt(g->vertex_count(t), y.cols);
        for (std::int64_t i = 0; i < yt.rows; ++i)
          for (std::int64_t c = 0; c < y.cols; ++c) yt.at(i, c) = y.at(rows[static_cast<std::size_t>(t)] + i, c);
        x[static_cast<std::size_t>(t)] = last ? std::move(yt) : test::relu(std::move(yt));
      }
    }
    return x[static_cast<std::size_t>(paper)];
  }
  std::uint64_t seed = 0, epoch = 0;
};

HeteroModelConfig hgt_config(int layers, std::int64_t hidden, std::int64_t heads, float dropout, float input_dropout,
                             std::int64_t embedding_dim) {
  HeteroModelConfig c = config_of(layers, hidden, dropout, input_dropout, 0, true, embedding_dim);
  c.kind = "hgt";
  c.heads = heads;
  return c;
}

const std::vector<std::int64_t> paper_labels{2, 0, 1};

// Random values for every dense parameter (scaled by 0.8) and table of a hand-drawn model, written
// into it and returned by name; `names` gets the dense parameters' names in the model's order.
std::map<std::string, Dense> randomise(HeteroModel& model, RandomStream& rng, std::vector<std::string>& names) {
  std::map<std::string, Dense> values;
  for (Parameter* p : model.parameters()) {
    Dense value = test::random_dense(rng, p->value.rows(), p->value.cols(), 0.8);
    p->value.copy_from(test::to_tensor(value).view());
    values[p->name] = value;
    names.push_back(p->name);
  }
  for (int t : {author, subject}) {
    Parameter& table = model.embedding(t)->parameter();
    Dense value = test::random_dense(rng, table.value.rows(), table.value.cols());
    table.value.copy_from(test::to_tensor(value).view());
    values[table.name] = value;
  }
  return values;
}

Step training_step(std::uint64_t seed, std::uint64_t epoch) {
  Step step;
  step.seed = seed;
  step.epoch = epoch;
  return step;
}

// The dropout masks (scaled by 1 / (1 - p)) of a hand-drawn model's `layers` layers by (layer,
// type), straight from the kernel with the key and global ids the model must use: layer 0 reads
// the papers' features and the tables with config.input_dropout, every later one inputs
// `hidden_width` wide (config.hidden by default) with config.dropout.
std::map<std::pair<int, int>, Dense> dropout_masks(const graph::HeteroGraph& g, int layers,
                                                   const HeteroModelConfig& config, std::int64_t feature_dim,
                                                   const Step& step, std::int64_t hidden_width = 0) {
  std::map<std::pair<int, int>, Dense> masks;
  for (int i = 0; i < layers; ++i) {
    const float p = i == 0 ? config.input_dropout : config.dropout;
    if (p == 0.0f) continue;
    for (int t = 0; t < g.num_vertex_types(); ++t) {
      const std::int64_t hidden = hidden_width > 0 ? hidden_width : config.hidden;
      const std::int64_t width = i > 0 ? hidden : (t == paper ? feature_dim : config.embedding_dim);
      Dense ones(g.vertex_count(t), width, 1.0);
      Tensor mask = test::to_tensor(ones);
      const std::vector<std::int64_t> ids = global_ids(g, t);
      kernels::dropout_forward(mask.view(), mask.view(), p, {step.seed, step.epoch, static_cast<std::uint32_t>(i)},
                               {ids.data(), static_cast<std::int64_t>(ids.size())});
      masks[{i, t}] = test::to_dense(mask);
    }
  }
  return masks;
}

// A training forward and backward of the model through log_softmax_nll over papers 0 and 2
// against reference(true) (the papers' logits in float64 from `params`, which the finite
// differences perturb): logits to 1e-5, the loss, every dense and table gradient to 1e-3 of
// central differences; the refusal of a second backward; an evaluation forward against
// reference(false), which keeps nothing for a backward.
void check_against_reference(HeteroModel& model, std::map<std::string, Dense>& params,
                             const std::function<Dense(bool)>& reference, const Step& step) {
  const std::int64_t classes = 3;
  const std::vector<std::int64_t> train_rows{0, 2};
  const auto loss = [&] { return test::naive_mean_nll(reference(true), paper_labels, train_rows); };
  model.zero_grad();
  const Tensor logits = model.forward(step);
  const double forward_error = test::max_relative_error(test::to_dense(logits), reference(true));
  Tensor grad = Tensor::full(3, classes, std::nanf(""));
  const kernels::LossSum l = kernels::log_softmax_nll(logits.view(), paper_labels.data(), {train_rows.data(), 2},
                                                      0.5f, grad.view());
  CHECK(l.loss_sum / 2 == Approx(loss()).epsilon(1e-5));
  model.backward(std::move(grad), step);

  std::vector<std::pair<std::string, const Tensor*>> grads;
  for (Parameter* p : model.parameters()) grads.emplace_back(p->name, &p->grad);
  for (int t : {author, subject}) {
    Parameter& table = model.embedding(t)->parameter();
    grads.emplace_back(table.name, &table.grad);
  }
  std::map<std::string, Dense> differences;
  double largest = 0.0;
  for (const auto& [name, unused] : grads) {
    differences[name] = test::finite_difference(params[name], loss);
    for (double v : differences[name].v) largest = std::max(largest, std::abs(v));
  }
  for (const auto& [name, grad_tensor] : grads) {
    // Gradients near 0 are measured against the scale of the model's gradients.
    const double error = test::max_relative_error(test::to_dense(*grad_tensor), differences[name], 1e-3 * largest);
    CAPTURE(name, error);
    CHECK(error < 1e-3);
  }
  CAPTURE(forward_error);
  CHECK(largest > 1e-3);
  CHECK(forward_error < 1e-5);
  CHECK_THROWS_WITH(model.backward(Tensor::zeros(3, classes), step), Catch::Contains("training forward"));

  Step eval = step;
  eval.training = false;
  CHECK(test::max_relative_error(test::to_dense(model.forward(eval)), reference(false)) < 1e-5);
  CHECK_THROWS_AS(model.backward(Tensor::zeros(3, classes), eval), InvalidArgument);
}

}  // namespace

TEST_CASE("HeteroModel names its parameters and tables, and decays only conv weights", "[train]") {
  HandDrawn h(config_of(2, 4, 0.5f, 0.0f, 0, true, 3), 5, 1);
  HeteroModelConfig c = config_of(2, 4, 0.5f, 0.0f, 0, true, 3);
  c.weight_decay = 5e-4f;
  c.embedding_weight_decay = 1e-4f;
  HeteroModel model(c, h.rg, {nullptr, &h.features, nullptr}, paper, 3, 1);
  const std::vector<Parameter*> ps = model.parameters();
  // Layer 0: 6 relation weights, 3 roots, 3 biases. Layer 1 computes the papers only: the 4
  // relations into them (writes, cites, rev_cites, rev_has_subject), their root and bias.
  REQUIRE(ps.size() == 12 + 6);
  CHECK(ps[0]->name == "conv0.weight.author__writes__paper");
  CHECK(ps[0]->value.rows() == 3);  // the author table's width
  CHECK(ps[6]->name == "conv0.root.author");
  CHECK(ps[7]->name == "conv0.root.paper");
  CHECK(ps[7]->value.rows() == 5);  // the paper features' width
  CHECK(ps[9]->name == "conv0.bias.author");
  CHECK(ps[12]->name == "conv1.weight.author__writes__paper");
  CHECK(ps[15]->name == "conv1.weight.subject__rev_has_subject__paper");
  CHECK(ps[17]->name == "conv1.bias.paper");
  CHECK(ps[17]->value.cols() == 3);
  std::int64_t values = 0;
  for (const Parameter* p : ps) {
    CAPTURE(p->name);
    CHECK(p->weight_decay == (p->name.find(".bias.") == std::string::npos ? 5e-4f : 0.0f));
    values += p->value.numel();
  }
  CHECK(model.layout().parameter_bytes() == values * 4);
  REQUIRE(model.embedding(author) != nullptr);
  CHECK(model.embedding(paper) == nullptr);
  CHECK(model.embedding(subject)->parameter().name == "embedding.subject");
  CHECK(model.embedding(subject)->rows() == 2);
  CHECK(model.embedding(author)->dim() == 3);
  CHECK(model.embedding(author)->parameter().weight_decay == 1e-4f);
  std::vector<std::string> buffers;
  for (const auto& b : model.buffers()) buffers.push_back(b.first);
  CHECK(buffers == std::vector<std::string>{"embedding.author", "embedding.author.exp_avg",
                                            "embedding.author.exp_avg_sq", "embedding.subject",
                                            "embedding.subject.exp_avg", "embedding.subject.exp_avg_sq"});
  CHECK(model.layout().host_bytes() == 8 * 8 + (3 + 2) * (4 * 3 * 4 + 8 + 1));
  CHECK(model.target_type() == paper);
  CHECK(model.num_classes() == 3);
  CHECK(model.num_layers() == 2);
}

TEST_CASE("HeteroModel uses bases in the layers whose relations read one width", "[train]") {
  const graph::HeteroGraph g = hand_drawn_graph();
  const RgcnGraph rg(g);
  const Tensor features = Tensor::full(3, 5, 1.0f);
  // Tables of width 3 beside features of width 5: the first layer keeps its relation weights.
  HeteroModel mixed(config_of(3, 4, 0.5f, 0.0f, 2, true, 3), rg, {nullptr, &features, nullptr}, paper, 3, 1);
  CHECK_FALSE(mixed.uses_bases(0));
  CHECK(mixed.uses_bases(1));
  CHECK(mixed.uses_bases(2));
  CHECK(mixed.parameters()[0]->name == "conv0.weight.author__writes__paper");
  CHECK(mixed.parameters()[12]->name == "conv1.bases");
  CHECK(mixed.parameters()[12]->value.rows() == 2 * 4);
  CHECK(mixed.parameters()[13]->name == "conv1.comp");
  // Tables as wide as the features: every layer composes its weights.
  HeteroModel same(config_of(2, 4, 0.5f, 0.0f, 2, true, 5), rg, {nullptr, &features, nullptr}, paper, 3, 1);
  CHECK(same.uses_bases(0));
  CHECK(same.parameters()[0]->name == "conv0.bases");
  HeteroModel none(config_of(2, 4, 0.5f, 0.0f, 0, true, 5), rg, {nullptr, &features, nullptr}, paper, 3, 1);
  CHECK_FALSE(none.uses_bases(0));
  CHECK_FALSE(none.uses_bases(1));
}

TEST_CASE("HeteroModel draws Glorot weights and tables and zero biases from its seed alone", "[train]") {
  const graph::HeteroGraph g = hand_drawn_graph();
  const RgcnGraph rg(g);
  const Tensor features = Tensor::full(3, 5, 1.0f);
  const HeteroModelConfig c = config_of(2, 8, 0.5f, 0.0f, 2, true, 4);
  HeteroModel a(c, rg, {nullptr, &features, nullptr}, paper, 3, 42);
  HeteroModel b(c, rg, {nullptr, &features, nullptr}, paper, 3, 42);
  HeteroModel other(c, rg, {nullptr, &features, nullptr}, paper, 3, 43);
  const auto check_glorot = [](const Tensor& w) {
    const double limit = std::sqrt(6.0 / static_cast<double>(w.rows() + w.cols()));
    const std::vector<float> values = w.to_vector();
    CHECK(std::all_of(values.begin(), values.end(), [&](float v) { return std::abs(v) <= limit; }));
    CHECK(std::any_of(values.begin(), values.end(), [&](float v) { return std::abs(v) > limit / 4; }));
  };
  for (std::size_t k = 0; k < a.parameters().size(); ++k) {
    const Parameter& p = *a.parameters()[k];
    CAPTURE(p.name);
    CHECK(p.value.to_vector() == b.parameters()[k]->value.to_vector());
    if (p.name.find(".bias.") != std::string::npos) {
      CHECK(p.value.to_vector() == std::vector<float>(static_cast<std::size_t>(p.value.numel()), 0.0f));
      continue;
    }
    CHECK(p.value.to_vector() != other.parameters()[k]->value.to_vector());
    check_glorot(p.value);
  }
  for (int t : {author, subject}) {
    CAPTURE(t);
    CHECK(a.embedding(t)->parameter().value.to_vector() == b.embedding(t)->parameter().value.to_vector());
    CHECK(a.embedding(t)->parameter().value.to_vector() != other.embedding(t)->parameter().value.to_vector());
    check_glorot(a.embedding(t)->parameter().value);
  }
  // Every tensor has its own stream.
  CHECK(a.embedding(author)->parameter().value.to_vector()[0] !=
        a.embedding(subject)->parameter().value.to_vector()[0]);
  CHECK(a.parameters()[0]->value.to_vector()[0] != a.parameters()[1]->value.to_vector()[0]);
}

TEST_CASE("HeteroModel gradients through log_softmax_nll match finite differences of a float64 R-GCN", "[train]") {
  const ModelCase mc = GENERATE(
      ModelCase{"two layers, dropout everywhere", config_of(2, 5, 0.5f, 0.3f, 0, true, 3), 4},
      ModelCase{"three layers, bases everywhere, no bias", config_of(3, 4, 0.4f, 0.0f, 2, false, 4), 4},
      ModelCase{"two layers, bases after the first", config_of(2, 6, 0.0f, 0.5f, 3, true, 2), 5},
      ModelCase{"one layer", config_of(1, 0, 0.5f, 0.5f, 0, true, 3), 2});
  const std::uint64_t seed = test::case_seed(std::hash<std::string>{}(mc.name));
  CAPTURE(mc.name, seed);
  HandDrawn h(mc.config, mc.feature_dim, seed);
  RandomStream rng(seed, 1);
  ReferenceRgcn ref;
  ref.g = &h.g;
  ref.config = mc.config;
  for (int i = 0; i < mc.config.layers; ++i) ref.layer_bases.push_back(h.model.uses_bases(i));
  ref.features["paper"] = h.x;
  std::vector<std::string> names;
  ref.params = randomise(h.model, rng, names);
  const Step step = training_step(seed, 9);
  ref.masks = dropout_masks(h.g, mc.config.layers, mc.config, mc.feature_dim, step);
  check_against_reference(h.model, ref.params,
                          [&](bool training) { return ref.forward(training)[static_cast<std::size_t>(paper)]; }, step);
}

TEST_CASE("HeteroModel updates only the embedding rows in the receptive field of the labelled vertices", "[train]") {
  // Loss on p0 only. Two layers reach a0, a1 (write p0) and s0 (p0's subject) directly, and
  // through p1 (which p0 cites) again a1 and s0, but never a2 (no edges) or s1 (three hops:
  // s1 -> p2 -> p1 -> p0). A third layer reaches s1.
  const int layers = GENERATE(2, 3);
  CAPTURE(layers);
  HandDrawn h(config_of(layers, 16, 0.0f, 0.0f, 0, true, 4), 3, 7);
  HeteroModel& model = h.model;
  EmbeddingTable& authors = *model.embedding(author);
  EmbeddingTable& subjects = *model.embedding(subject);
  const std::vector<float> authors_before = authors.parameter().value.to_vector();
  const std::vector<float> subjects_before = subjects.parameter().value.to_vector();

  Step step;
  for (int epoch = 1; epoch <= 3; ++epoch) {
    step.epoch = static_cast<std::uint64_t>(epoch);
    model.zero_grad();
    const Tensor logits = model.forward(step);
    Tensor grad = Tensor::empty(3, 3);
    const std::vector<std::int64_t> rows{0};
    kernels::log_softmax_nll(logits.view(), paper_labels.data(), {rows.data(), 1}, 1.0f, grad.view());
    model.backward(std::move(grad), step);
    CHECK(authors.touched(0));
    CHECK(authors.touched(1));
    CHECK_FALSE(authors.touched(2));
    CHECK(subjects.touched(0));
    CHECK(subjects.touched(1) == (layers == 3));
    OptimizerConfig adam;
    adam.lr = 0.01f;
    model.sparse_step(adam);
    CHECK(authors.num_touched() == 0);
  }
  const std::vector<float> authors_after = authors.parameter().value.to_vector();
  const std::vector<float> subjects_after = subjects.parameter().value.to_vector();
  const auto row = [](const std::vector<float>& v, std::int64_t r) {
    return std::vector<float>(v.begin() + r * 4, v.begin() + (r + 1) * 4);
  };
  CHECK(row(authors_after, 0) != row(authors_before, 0));
  CHECK(row(authors_after, 1) != row(authors_before, 1));
  CHECK(row(authors_after, 2) == row(authors_before, 2));
  CHECK(authors.row_steps()[2] == 0);
  CHECK(authors.row_steps()[0] == 3);
  CHECK(row(subjects_after, 0) != row(subjects_before, 0));
  CHECK((row(subjects_after, 1) == row(subjects_before, 1)) == (layers == 2));
}

TEST_CASE("HeteroModel computes the same logits, gradients and updates on one and on two threads, to float32 rounding", "[train]") {
  const std::uint64_t seed = test::case_seed(31);
  CAPTURE(seed);
  const RandomProblem problem(seed, 4);
  const RgcnGraph& rg = problem.rg;
  const Tensor& features = problem.features;
  const std::vector<std::int64_t>& labels = problem.labels;
  const std::vector<std::int64_t>& rows = problem.rows;
  HeteroModelConfig c = config_of(3, 32, 0.5f, 0.2f, 0, true, 16);
  SECTION("relation weights") {}
  SECTION("bases") { c.num_bases = 3; }

  struct Outcome {
    std::vector<std::vector<float>> logits, grads, tables;
  };
  const auto run = [&] {
    HeteroModel model(c, rg, {&features, nullptr, nullptr, nullptr}, 0, 5, seed);
    Outcome o;
    OptimizerConfig adam;
    std::unique_ptr<Optimizer> optimizer = make_optimizer(adam);
    for (int epoch = 1; epoch <= 3; ++epoch) {
      Step step;
      step.seed = seed;
      step.epoch = static_cast<std::uint64_t>(epoch);
      model.zero_grad();
      const Tensor logits = model.forward(step);
      o.logits.push_back(logits.to_vector());
      Tensor grad = Tensor::empty(300, 5);
      kernels::log_softmax_nll(logits.view(), labels.data(), {rows.data(), static_cast<std::int64_t>(rows.size())},
                               1.0f / static_cast<float>(rows.size()), grad.view());
      model.backward(std::move(grad), step);
      if (epoch == 1) {
        for (Parameter* p : model.parameters()) o.grads.push_back(p->grad.to_vector());
        o.grads.push_back(model.embedding(1)->parameter().grad.to_vector());
      }
      optimizer->step(model.parameters());
      model.sparse_step(adam);
    }
    for (int t : {1, 2, 3}) o.tables.push_back(model.embedding(t)->parameter().value.to_vector());
    return o;
  };
  const Outcome one = test::with_threads(1, run);
  const Outcome two = test::with_threads(2, run);
  // halo's own kernels give the same bits on any thread count, but OpenBLAS's GEMM promises that
  // only for a fixed count: its Haswell kernels (which it also picks on AMD's Zen 5) block the
  // product differently on two threads. So one forward and backward agree to float32 rounding, and
  // three Adam steps to 1e-3 of the tables' scale: Adam divides by √v, so an entry whose gradient
  // is rounding noise may move by up to the learning rate (seen: 4e-4 over 60 seeds).
  using Arrays = std::vector<std::vector<float>>;
  const auto worst = [](const Arrays& expected, const Arrays& got) {
    REQUIRE(expected.size() == got.size());
    double w = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      Dense e(1, static_cast<std::int64_t>(expected[i].size())), g(1, static_cast<std::int64_t>(got[i].size()));
      std::copy(expected[i].begin(), expected[i].end(), e.v.begin());
      std::copy(got[i].begin(), got[i].end(), g.v.begin());
      w = std::max(w, test::max_relative_error(g, e));
    }
    return w;
  };
  CHECK(worst({one.logits[0]}, {two.logits[0]}) < 1e-5);
  CHECK(worst(one.grads, two.grads) < 1e-5);
  CHECK(worst(one.logits, two.logits) < 1e-3);
  CHECK(worst(one.tables, two.tables) < 1e-3);
}

TEST_CASE("HeteroModel trained on the training rows' logits alone follows the model that computes every row",
          "[train]") {
  const std::uint64_t seed = test::case_seed(32);
  CAPTURE(seed);
  const RandomProblem problem(seed, 0);
  const RgcnGraph& rg = problem.rg;
  const Tensor& features = problem.features;
  const std::vector<std::int64_t>& labels = problem.labels;
  std::vector<std::int64_t> rows, row_labels, positions;
  for (std::int64_t i = 299; i >= 0; i -= 3) {  // descending: the selection keeps the caller's order
    positions.push_back(static_cast<std::int64_t>(rows.size()));
    rows.push_back(i);
    row_labels.push_back(labels[static_cast<std::size_t>(i)]);
  }
  const auto n = static_cast<std::int64_t>(rows.size());
  HeteroModelConfig c = config_of(2, 32, 0.5f, 0.2f, 0, true, 16);
  SECTION("relation weights") {}
  SECTION("bases") { c.num_bases = 3; }

  HeteroModel every(c, rg, {&features, nullptr, nullptr, nullptr}, 0, 5, seed);
  HeteroModel some(c, rg, {&features, nullptr, nullptr, nullptr}, 0, 5, seed);
  some.set_training_rows({rows.data(), n});
  OptimizerConfig adam;
  std::unique_ptr<Optimizer> opt_every = make_optimizer(adam);
  std::unique_ptr<Optimizer> opt_some = make_optimizer(adam);
  for (int epoch = 1; epoch <= 4; ++epoch) {
    CAPTURE(epoch);
    Step step;
    step.seed = seed;
    step.epoch = static_cast<std::uint64_t>(epoch);
    every.zero_grad();
    some.zero_grad();
    const Tensor all_logits = every.forward(step);
    const Tensor row_logits = some.forward(step);
    REQUIRE(row_logits.rows() == n);
    Tensor grad_every = Tensor::empty(300, 5);
    Tensor grad_some = Tensor::empty(n, 5);
    const kernels::LossSum loss_every = kernels::log_softmax_nll(all_logits.view(), labels.data(), {rows.data(), n},
                                                                 1.0f / static_cast<float>(n), grad_every.view());
    const kernels::LossSum loss_some = kernels::log_softmax_nll(
        row_logits.view(), row_labels.data(), {positions.data(), n}, 1.0f / static_cast<float>(n), grad_some.view());
    CHECK(loss_some.loss_sum == Approx(loss_every.loss_sum).epsilon(1e-6));
    every.backward(std::move(grad_every), step);
    some.backward(std::move(grad_some), step);
    test::check_parameter_grads_close(some.parameters(), every.parameters(), 1e-5);
    opt_every->step(every.parameters());
    opt_some->step(some.parameters());
    every.sparse_step(adam);
    some.sparse_step(adam);
  }
  // Evaluation returns every row, as the model without a selection does.
  Step eval;
  eval.training = false;
  const Tensor all_eval = every.forward(eval);
  const Tensor some_eval = some.forward(eval);
  CHECK(test::max_relative_error(test::to_dense(some_eval), test::to_dense(all_eval)) < 1e-4);
  for (int t : {1, 2, 3})
    CHECK(test::max_relative_error(test::to_dense(some.embedding(t)->parameter().value),
                                   test::to_dense(every.embedding(t)->parameter().value)) < 1e-4);
  // A gradient of every row after a training forward of the selected ones is refused.
  some.forward(Step{});
  CHECK_THROWS_AS(some.backward(Tensor::zeros(300, 5), Step{}), InvalidArgument);
}

TEST_CASE("HeteroModel with streamed tables trains as with the tables resident", "[train]") {
  const std::uint64_t seed = test::case_seed(33);
  CAPTURE(seed);
  const RandomProblem problem(seed, 3);
  const graph::HeteroGraph& g = problem.g;
  const RgcnGraph& rg = problem.rg;
  const Tensor& features = problem.features;
  const std::vector<std::int64_t>& labels = problem.labels;
  const std::vector<std::int64_t>& rows = problem.rows;
  // Input dropout too: its mask is drawn chunk by chunk, and its backward undone chunk by chunk.
  const HeteroModelConfig resident_config = config_of(2, 32, 0.5f, 0.2f, 0, true, 16);
  HeteroModelConfig streamed_config = resident_config;
  streamed_config.table_stream_budget = 3 * 3 * 7 * 16 * 4;  // three tables, three chunks of 7 rows each
  HeteroModel resident(resident_config, rg, {&features, nullptr, nullptr, nullptr}, 0, 5, seed);
  HeteroModel streamed(streamed_config, rg, {&features, nullptr, nullptr, nullptr}, 0, 5, seed);
  CHECK_FALSE(resident.streams_tables());
  REQUIRE(streamed.streams_tables());
  CHECK(streamed.table_chunk_rows(0) == 0);
  for (int t : {1, 2, 3}) {
    CAPTURE(t);
    // An empty table (venue) still gets a one-row chunk.
    CHECK(streamed.table_chunk_rows(t) == std::max<std::int64_t>(1, std::min<std::int64_t>(7, g.vertex_count(t))));
    CHECK_FALSE(streamed.embedding(t)->device().is_cuda());
  }
  const std::int64_t chunk_rows =
      streamed.table_chunk_rows(1) + streamed.table_chunk_rows(2) + streamed.table_chunk_rows(3);
  CHECK(streamed.layout().table_bytes() == 3 * chunk_rows * 16 * 4);
  CHECK(streamed.layout().table_bytes() <= streamed_config.table_stream_budget);
  CHECK(streamed.layout().host_bytes() > resident.layout().host_bytes());

  // The same losses to 1e-5; the first step's gradients to 1e-5 as well (later ones come from
  // parameters Adam has moved apart by rounding: a near-zero gradient's step is sign(g) · lr).
  OptimizerConfig adam;
  std::unique_ptr<Optimizer> opt_resident = make_optimizer(adam);
  std::unique_ptr<Optimizer> opt_streamed = make_optimizer(adam);
  for (int epoch = 1; epoch <= 3; ++epoch) {
    CAPTURE(epoch);
    Step step;
    step.seed = seed;
    step.epoch = static_cast<std::uint64_t>(epoch);
    std::vector<double> losses;
    for (HeteroModel* model : {&resident, &streamed}) {
      model->zero_grad();
      const Tensor logits = model->forward(step);
      Tensor grad = Tensor::empty(300, 5);
      losses.push_back(kernels::log_softmax_nll(logits.view(), labels.data(),
                                                {rows.data(), static_cast<std::int64_t>(rows.size())},
                                                1.0f / static_cast<float>(rows.size()), grad.view())
                           .loss_sum);
      model->backward(std::move(grad), step);
    }
    CHECK(losses[1] == Approx(losses[0]).epsilon(1e-5));
    if (epoch == 1) {
      test::check_parameter_grads_close(streamed.parameters(), resident.parameters(), 1e-5);
      for (int t : {1, 2}) {
        CAPTURE(t);
        CHECK(streamed.embedding(t)->num_touched() == resident.embedding(t)->num_touched());
        CHECK(test::max_relative_error(test::to_dense(streamed.embedding(t)->parameter().grad),
                                       test::to_dense(resident.embedding(t)->parameter().grad)) < 1e-5);
      }
    }
    opt_resident->step(resident.parameters());
    opt_streamed->step(streamed.parameters());
    resident.sparse_step(adam);
    streamed.sparse_step(adam);
    for (int t : {1, 2}) {
      CHECK(streamed.embedding(t)->num_touched() == 0);
      CHECK(streamed.embedding(t)->row_steps().to_vector() == resident.embedding(t)->row_steps().to_vector());
    }
  }
  Step eval;
  eval.training = false;
  CHECK(test::max_relative_error(test::to_dense(streamed.forward(eval)), test::to_dense(resident.forward(eval))) <
        1e-3);

  // A budget below three rows of one table is refused with the minimum.
  HeteroModelConfig tiny = resident_config;
  tiny.table_stream_budget = 100;
  CHECK_THROWS_WITH(HeteroModel(tiny, rg, {&features, nullptr, nullptr, nullptr}, 0, 5, seed),
                    Catch::Contains("give at least 576 bytes"));
}

namespace {

HeteroModelConfig with_kind(HeteroModelConfig c, const char* kind, std::int64_t heads) {
  c.kind = kind;
  c.heads = heads;
  return c;
}

}  // namespace

namespace {

HeteroModelConfig rgat_averaged(HeteroModelConfig c) {
  c = with_kind(c, "rgat", 4);
  c.out_heads = 2;  // the last layer averages its heads: backward holds their output's gradient
  c.attention_dropout = 0.3f;
  return c;
}

}  // namespace

namespace {

// One training step of two models over random_hetero_graph's papers (6 classes, every other paper
// labelled at random from rng): their logits within 1e-5 of each other and every parameter's
// gradient within 1e-4 (relative), as two ways of computing one function give.
void check_same_step(HeteroModel& a, HeteroModel& b, const Step& step, RandomStream& rng) {
  std::vector<std::int64_t> labels(300), rows;
  for (std::int64_t i = 0; i < 300; i += 2) {
    labels[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(rng.below(6));
    rows.push_back(i);
  }
  std::vector<Dense> logits, grads;
  for (HeteroModel* model : {&a, &b}) {
    const Tensor y = model->forward(step);
    logits.push_back(test::to_dense(y));
    Tensor grad = Tensor::empty(300, 6);
    kernels::log_softmax_nll(y.view(), labels.data(), {rows.data(), static_cast<std::int64_t>(rows.size())},
                             1.0f / static_cast<float>(rows.size()), grad.view());
    model->backward(std::move(grad), step);
    for (Parameter* p : model->parameters()) grads.push_back(test::to_dense(p->grad));
  }
  CHECK(test::max_relative_error(logits[0], logits[1]) < 1e-5);
  const std::size_t n = grads.size() / 2;
  for (std::size_t k = 0; k < n; ++k) {
    CAPTURE(k);
    CHECK(test::max_relative_error(grads[k], grads[n + k]) < 1e-4);
  }
}

}  // namespace

TEST_CASE("HeteroModel drops an input its first layer reads by products as it reads it, as on a dropped copy",
          "[train]") {
  // Every type has features (fixed inputs, no table), the papers 4,096 wide: a dropout applied as
  // the layer reads them goes through chunks of 256 rows. The model with input dropout p must
  // compute what the model without it computes on features dropped beforehand (the same mask:
  // the layer's key and the vertices' global ids), the products summed chunk by chunk.
  const std::string kind = GENERATE(as<std::string>{}, "rgat", "hgt");
  CAPTURE(kind);
  const std::uint64_t seed = test::case_seed(std::hash<std::string>{}(kind) + 33);
  const graph::HeteroGraph g = random_hetero_graph(seed);
  const RgcnGraph rg(g);
  RandomStream rng(seed, 1);
  const std::vector<std::int64_t> widths{4096, 40, 8, 4};
  std::vector<Tensor> features, dropped;
  Step step;
  step.seed = seed;
  step.epoch = 2;
  const Dropout input_dropout(0.4f, 0);
  std::int64_t offset = 0;
  for (int t = 0; t < rg.num_vertex_types(); ++t) {
    Dense x = test::random_dense(rng, g.vertex_count(t), widths[static_cast<std::size_t>(t)]);
    features.push_back(test::to_tensor(x));
    std::vector<std::int64_t> ids(static_cast<std::size_t>(g.vertex_count(t)));
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = offset + static_cast<std::int64_t>(i);
    offset += g.vertex_count(t);
    Step type_step = step;
    type_step.global_ids = {ids.data(), static_cast<std::int64_t>(ids.size())};
    dropped.push_back(input_dropout.forward(features.back(), type_step));
  }
  HeteroModelConfig c = with_kind(config_of(2, 8, 0.0f, 0.4f, 0, true, 4), kind.c_str(), 2);
  HeteroModelConfig without = c;
  without.input_dropout = 0.0f;
  HeteroModel reading(c, rg, {&features[0], &features[1], &features[2], &features[3]}, 0, 6, seed);
  HeteroModel copied(without, rg, {&dropped[0], &dropped[1], &dropped[2], &dropped[3]}, 0, 6, seed);
  check_same_step(reading, copied, step, rng);
}

TEST_CASE("HeteroModel keeps bfloat16 features as they are and computes what it computes on their widening",
          "[train]") {
  // The papers 600 wide (chunks of 1,747 rows hold them all; the authors' too), in bfloat16, the
  // authors too; the other two types float32. With input dropout the bfloat16 rows are dropped
  // as they are widened, the mask drawn on every read; the float32 model draws it once.
  const std::string kind = GENERATE(as<std::string>{}, "rgat", "hgt");
  const float input_dropout = GENERATE(0.0f, 0.4f);
  CAPTURE(kind, input_dropout);
  const std::uint64_t seed = test::case_seed(std::hash<std::string>{}(kind) + 34);
  const graph::HeteroGraph g = random_hetero_graph(seed);
  const RgcnGraph rg(g);
  RandomStream rng(seed, 1);
  const std::vector<std::int64_t> widths{600, 40, 8, 4};
  std::vector<Tensor> wide;
  std::vector<kernels::Bf16Rows> kept;
  for (int t = 0; t < rg.num_vertex_types(); ++t) {
    Dense values = test::random_dense(rng, g.vertex_count(t), widths[static_cast<std::size_t>(t)]);
    const Tensor x = test::to_tensor(values);
    kept.push_back(kernels::Bf16Rows::narrow(x.view()));
    wide.push_back(Tensor::empty(x.rows(), x.cols()));
    kernels::widen(kept.back().view(), wide.back().view());
  }
  const HeteroModelConfig c = with_kind(config_of(2, 8, 0.3f, input_dropout, 0, true, 4), kind.c_str(), 2);
  HeteroModel halves(c, rg, {nullptr, nullptr, &wide[2], &wide[3]}, 0, 6, seed, kernels::Device::cpu(), nullptr,
                     {&kept[0], &kept[1], nullptr, nullptr});
  HeteroModel widened(c, rg, {&wide[0], &wide[1], &wide[2], &wide[3]}, 0, 6, seed);
  CHECK(halves.layout().keeps_bf16(0));
  CHECK(halves.layout().keeps_bf16(1));
  CHECK_FALSE(halves.layout().keeps_bf16(2));
  CHECK_FALSE(widened.layout().keeps_bf16(0));
  CHECK(widened.layout().feature_bytes() - halves.layout().feature_bytes() ==
        (300 * 600 + 400 * 40) * 4 - kernels::Bf16Rows::bytes_for(300, 600) - kernels::Bf16Rows::bytes_for(400, 40));
  Step step;
  step.seed = seed;
  step.epoch = 1;
  check_same_step(halves, widened, step, rng);
  // R-GCN's first layer reads its inputs whole (it may aggregate them first): refused.
  CHECK_THROWS_WITH(HeteroModel(config_of(2, 8, 0.0f, 0.0f, 0, true, 4), rg, {nullptr, &wide[1], &wide[2], &wide[3]}, 0,
                                6, seed, kernels::Device::cpu(), nullptr, {&kept[0], nullptr, nullptr, nullptr}),
                    Catch::Contains("reads the features of type " + g.vertex_type_name(0) + " whole"));
  CHECK_THROWS_WITH(HeteroModel(c, rg, {&wide[0], &wide[1], &wide[2], &wide[3]}, 0, 6, seed, kernels::Device::cpu(),
                                nullptr, {&kept[0], nullptr, nullptr, nullptr}),
                    Catch::Contains("in float32 and in bfloat16"));
}

TEST_CASE("HeteroModelLayout::activation_bytes is what a step allocates at its most", "[train]") {
  const HeteroModelConfig c = GENERATE(
      config_of(2, 32, 0.5f, 0.5f, 0, true, 16), config_of(3, 16, 0.5f, 0.0f, 2, true, 24),
      config_of(2, 64, 0.0f, 0.0f, 0, false, 8), with_kind(config_of(2, 16, 0.5f, 0.5f, 0, true, 16), "rgat", 4),
      rgat_averaged(config_of(2, 16, 0.5f, 0.0f, 0, true, 16)),
      with_kind(config_of(2, 16, 0.5f, 0.0f, 0, true, 16), "hgt", 2),
      with_kind(config_of(1, 32, 0.5f, 0.5f, 0, true, 16), "hgt", 4));
  // Every third paper trains, as the trainer's model does (its last layer computes those rows
  // only), or all of them.
  const std::int64_t every = GENERATE(0, 3);
  CAPTURE(c.kind, c.layers, c.hidden, c.num_bases, c.input_dropout, every);
  const std::uint64_t seed = test::case_seed(32);
  const graph::HeteroGraph g = random_hetero_graph(seed);
  const RgcnGraph rg(g);
  RandomStream rng(seed, 1);
  // Two featured types of different widths (fixed inputs: no input gradient), two tables; 37
  // classes, so that the logits weigh in.
  Dense paper_x = test::random_dense(rng, 300, 24), author_x = test::random_dense(rng, 400, 40);
  const Tensor papers = test::to_tensor(paper_x), authors = test::to_tensor(author_x);
  const std::int64_t classes = 37;
  // RGAT's and HGT's first layers read them by products: kept in bfloat16, they are widened a
  // chunk at a time.
  const bool bf16 = c.kind != "rgcn" && GENERATE(false, true);
  CAPTURE(bf16);
  const kernels::Bf16Rows papers16 = kernels::Bf16Rows::narrow(papers.view()),
                          authors16 = kernels::Bf16Rows::narrow(authors.view());
  HeteroModel model = bf16 ? HeteroModel(c, rg, {nullptr, nullptr, nullptr, nullptr}, 0, classes, seed,
                                         kernels::Device::cpu(), nullptr, {&papers16, &authors16, nullptr, nullptr})
                           : HeteroModel(c, rg, {&papers, &authors, nullptr, nullptr}, 0, classes, seed);
  CHECK(model.layout().keeps_bf16(0) == bf16);
  CHECK(model.layout().feature_bytes() ==
        (bf16 ? kernels::Bf16Rows::bytes_for(300, 24) + kernels::Bf16Rows::bytes_for(400, 40)
              : (300 * 24 + 400 * 40) * 4));
  std::vector<std::int64_t> labels(300), rows;
  for (std::int64_t i = 0; i < 300; ++i) {
    labels[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(classes)));
    if (every == 0 || i % every == 0) rows.push_back(i);
  }
  const auto n = static_cast<std::int64_t>(rows.size());
  if (every > 0) model.set_training_rows({rows.data(), n});
  std::vector<std::int64_t> loss_rows(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k)
    loss_rows[static_cast<std::size_t>(k)] = every > 0 ? k : rows[static_cast<std::size_t>(k)];
  std::vector<std::int64_t> loss_labels(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k)
    loss_labels[static_cast<std::size_t>(k)] = labels[static_cast<std::size_t>(rows[static_cast<std::size_t>(k)])];
  Step step;

  // A step as the trainer takes it: forward, the loss's gradient beside the logits, the logits
  // freed, backward.
  const kernels::Device cpu = kernels::Device::cpu();
  const std::int64_t before = kernels::tensor_bytes_in_use(cpu);
  kernels::reset_tensor_peak_bytes(cpu);
  Tensor logits = model.forward(step);
  REQUIRE(logits.rows() == (every > 0 ? n : 300));
  Tensor grad = Tensor::empty(logits.rows(), classes);
  std::vector<std::int64_t> logit_labels(static_cast<std::size_t>(logits.rows()));
  for (std::int64_t k = 0; k < n; ++k)
    logit_labels[static_cast<std::size_t>(loss_rows[static_cast<std::size_t>(k)])] =
        loss_labels[static_cast<std::size_t>(k)];
  kernels::log_softmax_nll(logits.view(), logit_labels.data(), {loss_rows.data(), n}, 1.0f / static_cast<float>(n),
                           grad.view());
  logits = Tensor();
  model.backward(std::move(grad), step);
  const std::int64_t used = kernels::tensor_peak_bytes(cpu) - before;
  const std::int64_t estimate = model.layout().activation_bytes(every > 0 ? n : -1);
  CAPTURE(used, estimate);
  // Never below it, and within 5 % of it: every layer's outputs, saved tensors, workspace and
  // gradients as they are allocated, the logits and their gradient among them.
  CHECK(used <= estimate);
  CHECK(20 * used >= 19 * estimate);
  // Nothing is kept once backward is done.
  CHECK(kernels::tensor_bytes_in_use(cpu) - before <= 4096);

  // An evaluation forward (every row) stays within it too.
  Step evaluation;
  evaluation.training = false;
  kernels::reset_tensor_peak_bytes(cpu);
  const Tensor all = model.forward(evaluation);
  CHECK(all.rows() == 300);
  CHECK(kernels::tensor_peak_bytes(cpu) - before <= estimate);
}

TEST_CASE("HeteroModel refuses bad configurations, inputs that do not fit the graph, and misuse", "[train]") {
  const graph::HeteroGraph g = hand_drawn_graph();
  const RgcnGraph rg(g);
  const Tensor features = Tensor::full(3, 5, 1.0f), short_features = Tensor::full(2, 5, 1.0f);
  const HeteroModelConfig c = config_of(2, 4, 0.5f, 0.0f, 0, true, 3);
  CHECK_THROWS_WITH(HeteroModel(c, rg, {nullptr, &features}, paper, 3, 1),
                    Catch::Contains("one feature tensor (or nullptr) per vertex type (3), got 2"));
  CHECK_THROWS_WITH(HeteroModel(c, rg, {nullptr, &short_features, nullptr}, paper, 3, 1),
                    Catch::Contains("features of type paper are 2 x 5, expected 3 rows"));
  CHECK_THROWS_WITH(HeteroModel(c, rg, {nullptr, &features, nullptr}, 3, 3, 1), Catch::Contains("target type 3"));
  CHECK_THROWS_WITH(
      HeteroModel(config_of(2, 4, 0.5f, 0.0f, 0, true, 0), rg, {nullptr, &features, nullptr}, paper, 3, 1),
      Catch::Contains("type author has no features and embedding_dim is 0"));
  CHECK_THROWS_AS(HeteroModel(config_of(0, 4, 0.5f, 0.0f, 0, true, 3), rg, {nullptr, &features, nullptr}, paper, 3, 1),
                  InvalidArgument);
  CHECK_THROWS_AS(HeteroModel(config_of(2, 0, 0.5f, 0.0f, 0, true, 3), rg, {nullptr, &features, nullptr}, paper, 3, 1),
                  InvalidArgument);
  CHECK_THROWS_AS(HeteroModel(config_of(2, 4, 1.0f, 0.0f, 0, true, 3), rg, {nullptr, &features, nullptr}, paper, 3, 1),
                  InvalidArgument);
  CHECK_THROWS_AS(HeteroModel(c, rg, {nullptr, &features, nullptr}, paper, 0, 1), InvalidArgument);

  HeteroModel model(c, rg, {nullptr, &features, nullptr}, paper, 3, 1);
  Step step;
  CHECK_THROWS_WITH(model.backward(Tensor::zeros(3, 3), step), Catch::Contains("training forward"));
  model.forward(step);
  CHECK_THROWS_WITH(model.backward(Tensor::zeros(3, 4), step), Catch::Contains("is 3 x 4, expected 3 x 3"));
  const std::vector<std::int64_t> ids{0, 1, 2};
  step.global_ids = {ids.data(), 3};
  CHECK_THROWS_WITH(model.forward(step), Catch::Contains("global_ids must be empty"));
  CHECK_THROWS_AS(model.embedding(3), InvalidArgument);
  OptimizerConfig sgd;
  sgd.kind = "sgd";
  CHECK_THROWS_WITH(model.sparse_step(sgd), Catch::Contains("Adam or AdamW"));
}

TEST_CASE("HeteroModel of kind hgt projects the types its layers read and initialises as PyG's HGT", "[train]") {
  HeteroModelConfig c = hgt_config(1, 4, 2, 0.0f, 0.0f, 3);
  c.weight_decay = 1e-3f;
  HandDrawn h(c, 5, 1);
  const std::vector<Parameter*> ps = h.model.parameters();
  // The one HGT layer computes the papers, reading authors (writes), papers (cites, rev_cites)
  // and subjects (rev_has_subject): all three are projected.
  std::vector<std::string> names;
  for (const Parameter* p : ps) names.push_back(p->name);
  CHECK(names == std::vector<std::string>{"input.author.weight",
                                          "input.author.bias",
                                          "input.paper.weight",
                                          "input.paper.bias",
                                          "input.subject.weight",
                                          "input.subject.bias",
                                          "conv0.author.kqv.weight",
                                          "conv0.author.kqv.bias",
                                          "conv0.paper.kqv.weight",
                                          "conv0.paper.kqv.bias",
                                          "conv0.subject.kqv.weight",
                                          "conv0.subject.kqv.bias",
                                          "conv0.author__writes__paper.k_rel.weight",
                                          "conv0.author__writes__paper.v_rel.weight",
                                          "conv0.author__writes__paper.prior",
                                          "conv0.paper__cites__paper.k_rel.weight",
                                          "conv0.paper__cites__paper.v_rel.weight",
                                          "conv0.paper__cites__paper.prior",
                                          "conv0.paper__rev_cites__paper.k_rel.weight",
                                          "conv0.paper__rev_cites__paper.v_rel.weight",
                                          "conv0.paper__rev_cites__paper.prior",
                                          "conv0.subject__rev_has_subject__paper.k_rel.weight",
                                          "conv0.subject__rev_has_subject__paper.v_rel.weight",
                                          "conv0.subject__rev_has_subject__paper.prior",
                                          "conv0.paper.out.weight",
                                          "conv0.paper.out.bias",
                                          "conv0.paper.skip",
                                          "output.paper.weight",
                                          "output.paper.bias"});
  std::int64_t values = 0;
  for (const Parameter* p : ps) {
    CAPTURE(p->name);
    const bool weight = p->name.size() > 7 && p->name.compare(p->name.size() - 7, 7, ".weight") == 0;
    CHECK(p->weight_decay == (weight ? 1e-3f : 0.0f));
    const std::vector<float> v = p->value.to_vector();
    if (p->name.find(".prior") != std::string::npos || p->name.find(".skip") != std::string::npos) {
      CHECK(std::all_of(v.begin(), v.end(), [](float e) { return e == 1.0f; }));
    } else if (weight) {
      CHECK(std::any_of(v.begin(), v.end(), [](float e) { return e != 0.0f; }));
    } else {
      CHECK(std::all_of(v.begin(), v.end(), [](float e) { return e == 0.0f; }));
    }
    values += p->value.numel();
  }
  CHECK(h.model.layout().parameter_bytes() == values * 4);
  CHECK(h.model.num_layers() == 3);
  CHECK(h.model.parameters()[0]->value.rows() == 3);  // the author table's width
  CHECK(h.model.parameters()[2]->value.rows() == 5);  // the paper features' width

  CHECK_THROWS_WITH(HandDrawn(hgt_config(1, 5, 2, 0.0f, 0.0f, 3), 5, 1),
                    Catch::Contains("hidden width divisible by its heads"));
  HeteroModelConfig bases = hgt_config(1, 4, 2, 0.0f, 0.0f, 3);
  bases.num_bases = 2;
  CHECK_THROWS_WITH(HandDrawn(bases, 5, 1), Catch::Contains("no basis decomposition"));
  HeteroModelConfig streamed = hgt_config(1, 4, 2, 0.0f, 0.0f, 3);
  streamed.table_stream_budget = 1 << 20;
  CHECK_THROWS_AS(HandDrawn(streamed, 5, 1), UnsupportedError);
}

TEST_CASE("HeteroModel of kind hgt matches finite differences of a float64 HGT model", "[train]") {
  const ModelCase mc = GENERATE(ModelCase{"one layer, two heads, input dropout", hgt_config(1, 4, 2, 0.0f, 0.3f, 3), 5},
                                ModelCase{"two layers, one head, dropout", hgt_config(2, 4, 1, 0.5f, 0.0f, 2), 4});
  const std::uint64_t seed = test::case_seed(std::hash<std::string>{}(mc.name));
  CAPTURE(mc.name, seed);
  HandDrawn h(mc.config, mc.feature_dim, seed);
  RandomStream rng(seed, 1);
  ReferenceHgt ref;
  ref.g = &h.g;
  ref.config = mc.config;
  ref.features["paper"] = h.x;
  ref.params = randomise(h.model, rng, ref.names);
  const Step step = training_step(seed, 4);
  // The input projection, each HGT layer and the output projection draw their own masks.
  ref.masks = dropout_masks(h.g, mc.config.layers + 2, mc.config, mc.feature_dim, step);
  check_against_reference(h.model, ref.params, [&](bool training) { return ref.forward(training); }, step);
}

TEST_CASE("HeteroModel of kind rgat matches finite differences of a float64 relational GAT", "[train]") {
  HeteroModelConfig two_heads = config_of(2, 3, 0.5f, 0.2f, 0, true, 3);
  two_heads.kind = "rgat";
  two_heads.heads = 2;
  two_heads.out_heads = 2;
  two_heads.attention_dropout = 0.3f;
  HeteroModelConfig one_layer = config_of(1, 4, 0.0f, 0.5f, 0, true, 2);
  one_layer.kind = "rgat";
  one_layer.negative_slope = 0.1f;
  const ModelCase mc = GENERATE_COPY(ModelCase{"two layers of two heads, averaged last, every dropout", two_heads, 4},
                                     ModelCase{"one layer of one head", one_layer, 5});
  const std::uint64_t seed = test::case_seed(std::hash<std::string>{}(mc.name));
  CAPTURE(mc.name, seed);
  HandDrawn h(mc.config, mc.feature_dim, seed);
  RandomStream rng(seed, 1);
  ReferenceRgat ref;
  ref.g = &h.g;
  ref.config = mc.config;
  ref.features["paper"] = h.x;
  ref.params = randomise(h.model, rng, ref.names);
  const Step step = training_step(seed, 6);
  ref.seed = step.seed;
  ref.epoch = step.epoch;
  ref.masks = dropout_masks(h.g, mc.config.layers, mc.config, mc.feature_dim, step,
                            mc.config.heads * mc.config.hidden);
  check_against_reference(h.model, ref.params, [&](bool training) { return ref.forward(training); }, step);
}
