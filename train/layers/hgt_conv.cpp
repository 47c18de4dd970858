// HgtConv: the typed linears, the relation transforms as segmented GEMMs over (relation, head),
// one dot-product attention per output type over its relation stack, GELU, the output linear,
// the skip gate, and their backward.
#include "train/layers/hgt_conv.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

#include "graph/base/error.hpp"
#include "graph/build.hpp"
#include "kernels/dot_attention.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "kernels/segmented_gemm.hpp"
#include "train/layers/init.hpp"

namespace halo::train {

using kernels::ConstTensorView;
using kernels::GemmSegment;
using kernels::Tensor;
using kernels::TensorView;
using kernels::Transpose;

namespace {

float sigmoid(float b) { return 1.0f / (1.0f + std::exp(-b)); }

}  // namespace

HgtConv::HgtConv(const RgcnGraph& graph, std::vector<std::int64_t> in_dims, std::int64_t out_dim,
                 const HgtConvOptions& options, const std::string& name, kernels::Device device)
    : graph_(&graph), name_(name), device_(device), in_dims_(std::move(in_dims)), out_dim_(out_dim),
      heads_(options.heads) {
  const int types = graph.num_vertex_types();
  HALO_EXPECTS(static_cast<int>(in_dims_.size()) == types,
               "HgtConv " + name + ": needs one input width per vertex type (" + std::to_string(types) + "), got " +
                   std::to_string(in_dims_.size()));
  HALO_EXPECTS(out_dim > 0 && heads_ > 0 && out_dim % heads_ == 0,
               "HgtConv " + name + ": the output width must be a positive multiple of the heads, got " +
                   std::to_string(out_dim) + " and " + std::to_string(heads_) + " heads");
  const auto ts = static_cast<std::size_t>(types);
  computes_.assign(ts, options.outputs.empty() ? 1 : 0);
  for (int t : options.outputs) {
    HALO_EXPECTS(t >= 0 && t < types, "HgtConv " + name + ": output type " + std::to_string(t) + " out of range");
    computes_[static_cast<std::size_t>(t)] = 1;
  }
  reads_ = computes_;
  for (int r = 0; r < graph.num_relations(); ++r)
    if (computes(graph.relation_dst(r))) {
      computed_relations_.push_back(r);
      reads_[static_cast<std::size_t>(graph.relation_src(r))] = 1;
    }
  input_grad_.assign(ts, 1);
  const std::int64_t f = out_dim, d = out_dim / heads_;
  kqv_weight_.resize(ts);
  kqv_bias_.resize(ts);
  out_weight_.resize(ts);
  out_bias_.resize(ts);
  skip_.resize(ts);
  stacks_.resize(ts);
  transposes_.resize(ts);
  for (int t = 0; t < types; ++t) {
    const auto tt = static_cast<std::size_t>(t);
    const std::string type = graph.vertex_type_name(t);
    if (reads(t)) {
      HALO_EXPECTS(in_dims_[tt] > 0, "HgtConv " + name + ": type " + type + " is read but has input width " +
                                         std::to_string(in_dims_[tt]));
      kqv_weight_[tt] = make_parameter(name + "." + type + ".kqv.weight", in_dims_[tt], 3 * f, device);
      kqv_bias_[tt] = make_parameter(name + "." + type + ".kqv.bias", 1, 3 * f, device);
    }
    if (!computes(t)) continue;
    out_weight_[tt] = make_parameter(name + "." + type + ".out.weight", f, f, device);
    out_bias_[tt] = make_parameter(name + "." + type + ".out.bias", 1, f, device);
    if (has_skip(t)) skip_[tt] = make_parameter(name + "." + type + ".skip", 1, 1, device);
    const graph::CsrGraph& stack = graph.stack(t).csr;
    stacks_[tt] = CsrOperator(stack.clone(), device);
    transposes_[tt] = CsrOperator(graph::transpose(stack), device);
  }
  const auto rs = static_cast<std::size_t>(graph.num_relations());
  k_rel_.resize(rs);
  v_rel_.resize(rs);
  prior_.resize(rs);
  for (int r : computed_relations_) {
    const std::string key = name + "." + graph.relation_type(r).key();
    k_rel_[static_cast<std::size_t>(r)] = make_parameter(key + ".k_rel.weight", heads_ * d, d, device);
    v_rel_[static_cast<std::size_t>(r)] = make_parameter(key + ".v_rel.weight", heads_ * d, d, device);
    prior_[static_cast<std::size_t>(r)] = make_parameter(key + ".prior", 1, heads_, device);
  }
  saved_.resize(ts);
}

Tensor HgtConv::composed_key_weight(int r) const {
  const std::int64_t d = out_dim_ / heads_;
  std::vector<float> w = k_rel_[static_cast<std::size_t>(r)].value.to_vector();
  const std::vector<float> mu = prior_[static_cast<std::size_t>(r)].value.to_vector();
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (std::int64_t h = 0; h < heads_; ++h)
    for (std::int64_t k = h * d * d; k < (h + 1) * d * d; ++k)
      w[static_cast<std::size_t>(k)] *= mu[static_cast<std::size_t>(h)] * scale;
  return Tensor::from_vector(heads_ * d, d, w, device_);
}

ConstTensorView HgtConv::head_columns(const Tensor& kqv, int kind, std::int64_t h) const {
  const std::int64_t d = out_dim_ / heads_;
  return kqv.view().slice_cols(kind * out_dim_ + h * d, kind * out_dim_ + (h + 1) * d);
}

std::vector<Tensor> HgtConv::forward(const std::vector<ConstTensorView>& x, const Step& step) {
  const RgcnGraph& g = *graph_;
  const int types = g.num_vertex_types();
  HALO_EXPECTS(static_cast<int>(x.size()) == types, "HgtConv " + name_ + ": needs one input per vertex type (" +
                                                        std::to_string(types) + "), got " + std::to_string(x.size()));
  const std::int64_t f = out_dim_, d = out_dim_ / heads_;
  pending_ = false;
  kqv_.clear();
  kqv_.resize(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    if (!reads(t)) continue;
    const auto tt = static_cast<std::size_t>(t);
    HALO_EXPECTS(x[tt].rows == g.num_inputs(t) && x[tt].cols == in_dims_[tt],
                 "HgtConv " + name_ + ": input of " + g.vertex_type_name(t) + " is " + std::to_string(x[tt].rows) +
                     " x " + std::to_string(x[tt].cols) + ", expected " + std::to_string(g.num_inputs(t)) + " x " +
                     std::to_string(in_dims_[tt]));
    kqv_[tt] = Tensor::empty(x[tt].rows, 3 * f, device_);
    kernels::gemm(x[tt], Transpose::no, kqv_weight_[tt].value.view(), Transpose::no, kqv_[tt].view());
    kernels::add_bias(kqv_[tt].view(), kqv_bias_[tt].value.view());
  }
  std::vector<Tensor> y(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    if (!computes(t)) continue;
    const auto tt = static_cast<std::size_t>(t);
    const graph::RelationStack& stack = g.stack(t);
    const std::int64_t n = g.num_outputs(t);
    Saved s;
    s.keys = Tensor::empty(stack.width(), f, device_);
    s.values = Tensor::empty(stack.width(), f, device_);
    std::vector<GemmSegment> key_segments, value_segments;
    for (int b = 0; b < stack.num_blocks(); ++b) {
      const int r = stack.relations[static_cast<std::size_t>(b)];
      const auto src = static_cast<std::size_t>(g.relation_src(r));
      const std::int64_t first = stack.block_offsets[static_cast<std::size_t>(b)];
      const std::int64_t last = stack.block_offsets[static_cast<std::size_t>(b) + 1];
      s.key_weights.push_back(composed_key_weight(r));
      if (first == last) continue;
      for (std::int64_t h = 0; h < heads_; ++h) {
        key_segments.push_back({head_columns(kqv_[src], 0, h),
                                s.key_weights.back().view().slice_rows(h * d, (h + 1) * d),
                                s.keys.view().slice_rows(first, last).slice_cols(h * d, (h + 1) * d)});
        value_segments.push_back({head_columns(kqv_[src], 2, h),
                                  v_rel_[static_cast<std::size_t>(r)].value.view().slice_rows(h * d, (h + 1) * d),
                                  s.values.view().slice_rows(first, last).slice_cols(h * d, (h + 1) * d)});
      }
    }
    kernels::segmented_gemm(key_segments, Transpose::no, Transpose::no);
    kernels::segmented_gemm(value_segments, Transpose::no, Transpose::no);
    s.attention = Tensor::empty(n, f, device_);
    s.row_max = Tensor::empty(n, heads_, device_);
    s.row_sum = Tensor::empty(n, heads_, device_);
    const ConstTensorView query = kqv_[tt].view().slice_cols(f, 2 * f).slice_rows(0, n);
    stacks_[tt].visit([&](const auto& a) {
      kernels::dot_attention_forward(a, query, s.keys.view(), s.values.view(), {heads_, 0.0f, {}}, {},
                                     s.attention.view(), s.row_max.view(), s.row_sum.view());
    });
    s.activated = Tensor::empty(n, f, device_);
    kernels::gelu_forward(s.attention.view(), s.activated.view());
    s.out = Tensor::empty(n, f, device_);
    kernels::gemm(s.activated.view(), Transpose::no, out_weight_[tt].value.view(), Transpose::no, s.out.view());
    kernels::add_bias(s.out.view(), out_bias_[tt].value.view());
    if (has_skip(t)) {  // backward needs o itself for the gate's gradient
      y[tt] = s.out.clone();
      const float a = sigmoid(skip_[tt].value.to_vector()[0]);
      kernels::axpby(1.0f - a, x[tt].slice_rows(0, n), a, y[tt].view());
    } else {
      y[tt] = std::move(s.out);
    }
    if (step.training) saved_[tt] = std::move(s);
  }
  if (step.training) {
    inputs_ = x;
    pending_ = true;
  } else {
    kqv_.clear();
  }
  return y;
}

std::vector<Tensor> HgtConv::backward(std::vector<Tensor> grad_y, const Step& /*step*/) {
  HALO_EXPECTS(pending_, "HgtConv " + name_ + ": backward needs a training forward before it");
  pending_ = false;
  const RgcnGraph& g = *graph_;
  const int types = g.num_vertex_types();
  const std::int64_t f = out_dim_, d = out_dim_ / heads_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<Tensor> grad_kqv(static_cast<std::size_t>(types)), grad_x(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    const auto tt = static_cast<std::size_t>(t);
    if (reads(t)) grad_kqv[tt] = Tensor::zeros(g.num_inputs(t), 3 * f, device_);
    if (reads(t) && input_grad(t)) grad_x[tt] = Tensor::zeros(g.num_inputs(t), in_dims_[tt], device_);
  }
  for (int t = 0; t < types; ++t) {
    if (!computes(t)) continue;
    const auto tt = static_cast<std::size_t>(t);
    const std::int64_t n = g.num_outputs(t);
    Saved& s = saved_[tt];
    Tensor& dy = grad_y.at(tt);
    HALO_EXPECTS(dy.rows() == n && dy.cols() == f, "HgtConv " + name_ + ": gradient of " + g.vertex_type_name(t) +
                                                       " is " + std::to_string(dy.rows()) + " x " +
                                                       std::to_string(dy.cols()));
    if (has_skip(t)) {
      const ConstTensorView x_out = inputs_[tt].slice_rows(0, n);
      const float a = sigmoid(skip_[tt].value.to_vector()[0]);
      // y = a · o + (1 - a) · x: dβ = a (1 - a) Σ dy ⊙ (o - x).
      const double dbeta = static_cast<double>(a) * (1.0 - a) *
                           (kernels::sum_of_products(dy.view(), s.out.view()) -
                            kernels::sum_of_products(dy.view(), x_out));
      kernels::axpby(1.0f, Tensor::from_vector(1, 1, {static_cast<float>(dbeta)}, device_).view(), 1.0f,
                     skip_[tt].grad.view());
      if (input_grad(t)) kernels::axpby(1.0f - a, dy.view(), 1.0f, grad_x[tt].view().slice_rows(0, n));
      kernels::axpby(a, dy.view(), 0.0f, dy.view());
    }
    kernels::gemm(s.activated.view(), Transpose::yes, dy.view(), Transpose::no, out_weight_[tt].grad.view(), 1.0f,
                  1.0f);
    kernels::column_sums(dy.view(), out_bias_[tt].grad.view(), true);
    Tensor grad_attention = Tensor::empty(n, f, device_);
    kernels::gemm(dy.view(), Transpose::no, out_weight_[tt].value.view(), Transpose::yes, grad_attention.view());
    dy = Tensor();
    kernels::gelu_backward(s.attention.view(), grad_attention.view(), grad_attention.view());
    const graph::RelationStack& stack = g.stack(t);
    Tensor grad_keys = Tensor::empty(stack.width(), f, device_), grad_values = Tensor::empty(stack.width(), f, device_);
    const ConstTensorView query = kqv_[tt].view().slice_cols(f, 2 * f).slice_rows(0, n);
    const TensorView grad_query = grad_kqv[tt].view().slice_cols(f, 2 * f).slice_rows(0, n);
    stacks_[tt].visit([&](const auto& a) {
      transposes_[tt].visit([&](const auto& at) {
        if constexpr (std::is_same_v<std::decay_t<decltype(a)>, std::decay_t<decltype(at)>>)
          kernels::dot_attention_backward(a, at, query, s.keys.view(), s.values.view(), {heads_, 0.0f, {}}, {},
                                          s.row_max.view(), s.row_sum.view(), grad_attention.view(), grad_query,
                                          grad_keys.view(), grad_values.view());
        else
          HALO_ASSERT(!"a relation stack and its transpose with different index types");
      });
    });
    // The relation transforms: per block and head, K = k_s · A', V = v_s · M.
    std::vector<Tensor> grad_key_weights;
    std::vector<GemmSegment> weight_segments, value_weight_segments, input_segments;
    for (int b = 0; b < stack.num_blocks(); ++b) {
      const auto bb = static_cast<std::size_t>(b);
      const int r = stack.relations[bb];
      const auto rr = static_cast<std::size_t>(r);
      const auto src = static_cast<std::size_t>(g.relation_src(r));
      const std::int64_t first = stack.block_offsets[bb], last = stack.block_offsets[bb + 1];
      grad_key_weights.push_back(Tensor::zeros(heads_ * d, d, device_));
      if (first == last) continue;
      for (std::int64_t h = 0; h < heads_; ++h) {
        const ConstTensorView dk = grad_keys.view().slice_rows(first, last).slice_cols(h * d, (h + 1) * d);
        const ConstTensorView dv = grad_values.view().slice_rows(first, last).slice_cols(h * d, (h + 1) * d);
        weight_segments.push_back({head_columns(kqv_[src], 0, h), dk,
                                   grad_key_weights.back().view().slice_rows(h * d, (h + 1) * d)});
        value_weight_segments.push_back({head_columns(kqv_[src], 2, h), dv,
                                         v_rel_[rr].grad.view().slice_rows(h * d, (h + 1) * d)});
        input_segments.push_back({dk, s.key_weights[bb].view().slice_rows(h * d, (h + 1) * d),
                                  grad_kqv[src].view().slice_cols(h * d, (h + 1) * d)});
        input_segments.push_back({dv, v_rel_[rr].value.view().slice_rows(h * d, (h + 1) * d),
                                  grad_kqv[src].view().slice_cols(2 * f + h * d, 2 * f + (h + 1) * d)});
      }
    }
    kernels::segmented_gemm(weight_segments, Transpose::yes, Transpose::no, 1.0f, 1.0f);
    kernels::segmented_gemm(value_weight_segments, Transpose::yes, Transpose::no, 1.0f, 1.0f);
    kernels::segmented_gemm(input_segments, Transpose::no, Transpose::yes, 1.0f, 1.0f);
    // A' = A · μ / √D per head: dA += dA' · μ / √D, dμ = Σ dA' ⊙ A / √D.
    for (int b = 0; b < stack.num_blocks(); ++b) {
      const auto bb = static_cast<std::size_t>(b);
      const auto rr = static_cast<std::size_t>(stack.relations[bb]);
      const std::vector<float> mu = prior_[rr].value.to_vector();
      std::vector<float> grad_mu(static_cast<std::size_t>(heads_));
      for (std::int64_t h = 0; h < heads_; ++h) {
        const ConstTensorView da = grad_key_weights[bb].view().slice_rows(h * d, (h + 1) * d);
        grad_mu[static_cast<std::size_t>(h)] = static_cast<float>(
            kernels::sum_of_products(da, k_rel_[rr].value.view().slice_rows(h * d, (h + 1) * d)) * scale);
        kernels::axpby(mu[static_cast<std::size_t>(h)] * scale, da, 1.0f,
                       k_rel_[rr].grad.view().slice_rows(h * d, (h + 1) * d));
      }
      kernels::axpby(1.0f, Tensor::from_vector(1, heads_, grad_mu, device_).view(), 1.0f, prior_[rr].grad.view());
    }
    s = Saved();
  }
  for (int t = 0; t < types; ++t) {
    if (!reads(t)) continue;
    const auto tt = static_cast<std::size_t>(t);
    kernels::gemm(inputs_[tt], Transpose::yes, grad_kqv[tt].view(), Transpose::no, kqv_weight_[tt].grad.view(), 1.0f,
                  1.0f);
    kernels::column_sums(grad_kqv[tt].view(), kqv_bias_[tt].grad.view(), true);
    if (input_grad(t))
      kernels::gemm(grad_kqv[tt].view(), Transpose::no, kqv_weight_[tt].value.view(), Transpose::yes,
                    grad_x[tt].view(), 1.0f, 1.0f);
  }
  kqv_.clear();
  inputs_.clear();
  return grad_x;
}

std::vector<Parameter*> HgtConv::parameters() {
  std::vector<Parameter*> all;
  for (std::size_t t = 0; t < kqv_weight_.size(); ++t)
    if (reads(static_cast<int>(t))) {
      all.push_back(&kqv_weight_[t]);
      all.push_back(&kqv_bias_[t]);
    }
  for (int r : computed_relations_) {
    const auto rr = static_cast<std::size_t>(r);
    all.push_back(&k_rel_[rr]);
    all.push_back(&v_rel_[rr]);
    all.push_back(&prior_[rr]);
  }
  for (std::size_t t = 0; t < out_weight_.size(); ++t)
    if (computes(static_cast<int>(t))) {
      all.push_back(&out_weight_[t]);
      all.push_back(&out_bias_[t]);
      if (has_skip(static_cast<int>(t))) all.push_back(&skip_[t]);
    }
  return all;
}

}  // namespace halo::train
