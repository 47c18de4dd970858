// Tests of train/layers/embedding_table.*: gathering rows, gradients that touch rows (by index and by
// nonzero value), and the sparse Adam / AdamW step against dense Adam run on each row's own
// sequence of touches (kernels::adam_step in float, PyTorch's formula in double), untouched rows
// left bit for bit as they were, and misuse.
#include "train/layers/embedding_table.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "graph/base/random.hpp"
#include "kernels/optimizer_ops.hpp"
#include "kernels/tensor.hpp"
#include "tests/reference/naive_kernels.hpp"

using namespace halo;
using namespace halo::train;
using kernels::IndexView;
using kernels::Tensor;

namespace {

std::vector<float> random_values(RandomStream& rng, std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = static_cast<float>(2.0 * rng.uniform() - 1.0);
  return v;
}

std::vector<float> row_of(const Tensor& t, std::int64_t r) {
  const std::vector<float> all = t.to_vector();
  return {all.begin() + r * t.cols(), all.begin() + (r + 1) * t.cols()};
}

OptimizerConfig adam_config(const std::string& kind) {
  OptimizerConfig c;
  c.kind = kind;
  c.lr = 0.05f;
  c.beta1 = 0.8f;
  c.beta2 = 0.95f;
  c.eps = 1e-6f;
  return c;
}

}  // namespace

TEST_CASE("EmbeddingTable gathers rows and adds repeated gradient rows into the rows they name", "[train]") {
  EmbeddingTable table("embedding.author", 5, 2);
  table.parameter().value.copy_from(Tensor::from_vector(5, 2, {0, 1, 10, 11, 20, 21, 30, 31, 40, 41}).view());
  CHECK(table.rows() == 5);
  CHECK(table.dim() == 2);
  CHECK(table.parameter().name == "embedding.author");
  const std::vector<std::int64_t> rows{4, 0, 4};
  CHECK(table.gather({rows.data(), 3}).to_vector() == std::vector<float>{40, 41, 0, 1, 40, 41});

  // Rows 1 and 3 receive gradients, row 1 twice; a zero row named by index still counts.
  const std::vector<std::int64_t> index{1, 3, 1, 2};
  const Tensor grad = Tensor::from_vector(4, 2, {1, 2, 3, 4, 5, 6, 0, 0});
  table.accumulate_grad(IndexView{index.data(), 4}, grad.view());
  CHECK(table.parameter().grad.to_vector() == std::vector<float>{0, 0, 6, 8, 0, 0, 3, 4, 0, 0});
  CHECK(table.num_touched() == 3);
  CHECK_FALSE(table.touched(0));
  CHECK(table.touched(1));
  CHECK(table.touched(2));
  CHECK(table.touched(3));
  CHECK_FALSE(table.touched(4));
}

TEST_CASE("EmbeddingTable touches the rows where a whole-table gradient is nonzero", "[train]") {
  EmbeddingTable table("embedding.field", 4, 3);
  // Row 0 all zero, row 2 one nonzero value, row 3 a negative zero and a value.
  const Tensor grad = Tensor::from_vector(4, 3, {0, 0, 0, 1, 2, 3, 0, 0, 0.5f, -0.0f, 0, -1});
  table.accumulate_grad(grad.view());
  table.accumulate_grad(grad.view());
  CHECK(table.num_touched() == 3);
  CHECK_FALSE(table.touched(0));
  CHECK(table.touched(2));
  CHECK(table.parameter().grad.to_vector() == std::vector<float>{0, 0, 0, 2, 4, 6, 0, 0, 1, 0, 0, -2});
  table.zero_grad();
  CHECK(table.num_touched() == 0);
  CHECK(table.parameter().grad.to_vector() == std::vector<float>(12, 0.0f));
}

TEST_CASE("EmbeddingTable's sparse Adam step follows dense Adam on each row's own touches", "[train]") {
  const std::string kind = GENERATE("adam", "adamw");
  const float weight_decay = GENERATE(0.0f, 0.1f);
  CAPTURE(kind, weight_decay);
  const OptimizerConfig config = adam_config(kind);
  const std::int64_t rows = 6, dim = 5;
  RandomStream rng(61, weight_decay > 0 ? 1 : 0);
  EmbeddingTable table("embedding.author", rows, dim, weight_decay);
  const std::vector<float> initial = random_values(rng, rows * dim);
  table.parameter().value.copy_from(Tensor::from_vector(rows, dim, initial).view());

  // Which rows each step touches: 0 and 1 always, 2 in steps 1 and 3, 4 and 5 only in step 2
  // (row 5 twice), 3 never.
  const std::vector<std::vector<std::int64_t>> touches{{0, 1, 2}, {1, 4, 5, 0, 5}, {0, 2, 1}, {1, 0}};
  // The reference: every row its own 1-row parameter, stepped by the dense kernel (and by
  // PyTorch's formula in double) only when touched, with that row's summed gradient.
  std::vector<Tensor> p, m, v;
  std::vector<std::vector<test::NaiveAdam>> naive(static_cast<std::size_t>(rows));
  std::vector<std::int64_t> steps(static_cast<std::size_t>(rows), 0);
  std::vector<std::vector<double>> naive_p(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    p.push_back(
        Tensor::from_vector(1, dim, std::vector<float>(initial.begin() + r * dim, initial.begin() + (r + 1) * dim)));
    m.push_back(Tensor::zeros(1, dim));
    v.push_back(Tensor::zeros(1, dim));
    for (std::int64_t j = 0; j < dim; ++j) {
      test::NaiveAdam a;
      a.lr = config.lr;
      a.beta1 = config.beta1;
      a.beta2 = config.beta2;
      a.eps = config.eps;
      a.weight_decay = weight_decay;
      a.decoupled = kind == "adamw";
      naive[static_cast<std::size_t>(r)].push_back(a);
      naive_p[static_cast<std::size_t>(r)].push_back(initial[static_cast<std::size_t>(r * dim + j)]);
    }
  }
  for (const std::vector<std::int64_t>& touched : touches) {
    const auto n = static_cast<std::int64_t>(touched.size());
    const std::vector<float> g = random_values(rng, n * dim);
    table.accumulate_grad(IndexView{touched.data(), n}, Tensor::from_vector(n, dim, g).view());
    std::vector<std::vector<float>> row_grad(static_cast<std::size_t>(rows), std::vector<float>(dim, 0.0f));
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < dim; ++j)
        row_grad[static_cast<std::size_t>(touched[static_cast<std::size_t>(i)])][static_cast<std::size_t>(j)] +=
            g[static_cast<std::size_t>(i * dim + j)];
    table.step(config);
    CHECK(table.num_touched() == 0);
    for (std::int64_t r : std::set<std::int64_t>(touched.begin(), touched.end())) {
      const auto rs = static_cast<std::size_t>(r);
      kernels::AdamHyper h;
      h.lr = config.lr;
      h.beta1 = config.beta1;
      h.beta2 = config.beta2;
      h.eps = config.eps;
      h.weight_decay = weight_decay;
      h.decoupled = kind == "adamw";
      const Tensor grad = Tensor::from_vector(1, dim, row_grad[rs]);
      kernels::adam_step(p[rs].view(), grad.view(), m[rs].view(), v[rs].view(), h, ++steps[rs]);
      for (std::int64_t j = 0; j < dim; ++j)
        naive_p[rs][static_cast<std::size_t>(j)] = naive[rs][static_cast<std::size_t>(j)].update(
            naive_p[rs][static_cast<std::size_t>(j)], row_grad[rs][static_cast<std::size_t>(j)]);
    }
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    CAPTURE(r);
    const auto rs = static_cast<std::size_t>(r);
    CHECK(table.row_steps()[r] == steps[rs]);
    const std::vector<float> actual = row_of(table.parameter().value, r);
    const std::vector<float> dense = p[rs].to_vector();
    for (std::int64_t j = 0; j < dim; ++j) {
      const auto js = static_cast<std::size_t>(j);
      CHECK(actual[js] == Approx(dense[js]).epsilon(1e-6).margin(1e-7));
      CHECK(actual[js] == Approx(naive_p[rs][js]).epsilon(1e-5).margin(1e-6));
    }
    const std::vector<float> exp_avg = row_of(*table.state()[0].second, r);
    for (std::int64_t j = 0; j < dim; ++j)
      CHECK(exp_avg[static_cast<std::size_t>(j)] ==
            Approx(m[rs].to_vector()[static_cast<std::size_t>(j)]).epsilon(1e-6).margin(1e-7));
  }
  // Row 3 was never touched: its value is the initial one bit for bit, its state zero.
  CHECK(row_of(table.parameter().value, 3) == std::vector<float>(initial.begin() + 3 * dim, initial.begin() + 4 * dim));
  CHECK(row_of(*table.state()[1].second, 3) == std::vector<float>(dim, 0.0f));
  CHECK(table.parameter().grad.to_vector() == std::vector<float>(static_cast<std::size_t>(rows * dim), 0.0f));
}

TEST_CASE("EmbeddingTable moves a row first touched in a late step by lr, as Adam's first step does", "[train]") {
  EmbeddingTable table("embedding.institution", 2, 3);
  const OptimizerConfig config = adam_config("adam");
  const std::vector<std::int64_t> first{0}, second{1};
  const Tensor g = Tensor::from_vector(1, 3, {0.5f, -2.0f, 0.25f});
  for (int step = 0; step < 5; ++step) {
    table.accumulate_grad(IndexView{first.data(), 1}, g.view());
    table.step(config);
  }
  table.accumulate_grad(IndexView{second.data(), 1}, g.view());
  table.step(config);
  // m̂ / sqrt(v̂) = g / |g| on a row's first step: each value moves by lr against its gradient's
  // sign, whatever the table's other rows have done.
  CHECK(row_of(table.parameter().value, 1)[0] == Approx(-0.05).epsilon(1e-4));
  CHECK(row_of(table.parameter().value, 1)[1] == Approx(0.05).epsilon(1e-4));
  CHECK(row_of(table.parameter().value, 1)[2] == Approx(-0.05).epsilon(1e-4));
  CHECK(table.row_steps()[0] == 5);
  CHECK(table.row_steps()[1] == 1);
}

TEST_CASE("EmbeddingTable names its state and rejects misuse without touching anything", "[train]") {
  EmbeddingTable table("embedding.author", 3, 2);
  const auto state = table.state();
  REQUIRE(state.size() == 2);
  CHECK(state[0].first == "embedding.author.exp_avg");
  CHECK(state[1].first == "embedding.author.exp_avg_sq");
  CHECK(state[1].second->rows() == 3);

  const std::vector<std::int64_t> bad{0, 3};
  const Tensor two_rows = Tensor::full(2, 2, 1.0f);
  CHECK_THROWS_WITH(table.accumulate_grad(IndexView{bad.data(), 2}, two_rows.view()),
                    Catch::Contains("index[1] = 3 is outside [0, 3)"));
  CHECK(table.num_touched() == 0);
  CHECK(table.parameter().grad.to_vector() == std::vector<float>(6, 0.0f));
  CHECK_THROWS_WITH(table.accumulate_grad(IndexView{bad.data(), 1}, two_rows.view()),
                    Catch::Contains("embedding.author") && Catch::Contains("got 2 x 2"));
  CHECK_THROWS_WITH(table.accumulate_grad(two_rows.view()), Catch::Contains("whole table, 3 x 2, got 2 x 2"));
  OptimizerConfig sgd;
  sgd.kind = "sgd";
  CHECK_THROWS_WITH(table.step(sgd), Catch::Contains("Adam or AdamW, got 'sgd'"));
  CHECK_THROWS_AS(EmbeddingTable("embedding.x", 3, 0), InvalidArgument);
}
