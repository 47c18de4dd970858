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

constexpr std::int64_t float_bytes = static_cast<std::int64_t>(sizeof(float));

float sigmoid(float b) { return 1.0f / (1.0f + std::exp(-b)); }

}  // namespace

HgtConvLayout::HgtConvLayout(const RgcnGraph& graph, std::vector<std::int64_t> input_widths,
                             std::int64_t output_width, const HgtConvOptions& options, const std::string& name)
    : in_dims(std::move(input_widths)), out_dim(output_width), heads(options.heads) {
  const int types = graph.num_vertex_types();
  HALO_EXPECTS(static_cast<int>(in_dims.size()) == types,
               "HgtConv " + name + ": needs one input width per vertex type (" + std::to_string(types) + "), got " +
                   std::to_string(in_dims.size()));
  HALO_EXPECTS(out_dim > 0 && heads > 0 && out_dim % heads == 0,
               "HgtConv " + name + ": the output width must be a positive multiple of the heads, got " +
                   std::to_string(out_dim) + " and " + std::to_string(heads) + " heads");
  computes.assign(static_cast<std::size_t>(types), options.outputs.empty() ? 1 : 0);
  for (int t : options.outputs) {
    HALO_EXPECTS(t >= 0 && t < types, "HgtConv " + name + ": output type " + std::to_string(t) + " out of range");
    computes[static_cast<std::size_t>(t)] = 1;
  }
  reads = computes;
  for (int r = 0; r < graph.num_relations(); ++r)
    if (computes[static_cast<std::size_t>(graph.relation_dst(r))] != 0) {
      computed.push_back(r);
      reads[static_cast<std::size_t>(graph.relation_src(r))] = 1;
    }
  for (int t = 0; t < types; ++t)
    HALO_EXPECTS(reads[static_cast<std::size_t>(t)] == 0 || in_dims[static_cast<std::size_t>(t)] > 0,
                 "HgtConv " + name + ": type " + graph.vertex_type_name(t) + " is read but has input width " +
                     std::to_string(in_dims[static_cast<std::size_t>(t)]));
}

std::int64_t HgtConvLayout::parameter_bytes(const RgcnGraph& graph) const {
  const std::int64_t f = out_dim, d = out_dim / heads;
  std::int64_t floats = static_cast<std::int64_t>(computed.size()) * (2 * heads * d * d + heads);
  for (int t = 0; t < graph.num_vertex_types(); ++t) {
    const auto ts = static_cast<std::size_t>(t);
    if (reads[ts] != 0) floats += (in_dims[ts] + 1) * 3 * f;
    if (computes[ts] != 0) floats += (f + 1) * f + (has_skip(t) ? 1 : 0);
  }
  return floats * float_bytes;
}

std::int64_t HgtConvLayout::saved_bytes(const RgcnGraph& graph) const {
  const std::int64_t f = out_dim, d = out_dim / heads;
  std::int64_t floats = 0;
  for (int t = 0; t < graph.num_vertex_types(); ++t) {
    const auto ts = static_cast<std::size_t>(t);
    if (reads[ts] != 0) floats += graph.num_inputs(t) * 3 * f;
    if (computes[ts] == 0) continue;
    const graph::RelationStack& stack = graph.stack(t);
    floats += 2 * stack.width() * f + (has_skip(t) ? 3 : 2) * graph.num_outputs(t) * f +
              2 * graph.num_outputs(t) * heads + stack.num_blocks() * heads * d * d;
  }
  return floats * float_bytes;
}

std::int64_t HgtConvLayout::workspace_bytes(const RgcnGraph& graph) const {
  const std::int64_t f = out_dim, d = out_dim / heads;
  std::int64_t floats = 0, busiest = 0;
  for (int t = 0; t < graph.num_vertex_types(); ++t) {
    const auto ts = static_cast<std::size_t>(t);
    if (reads[ts] != 0) floats += graph.num_inputs(t) * 3 * f;
    if (computes[ts] == 0) continue;
    const graph::RelationStack& stack = graph.stack(t);
    busiest = std::max(busiest, graph.num_outputs(t) * f + 2 * stack.width() * f + stack.num_blocks() * heads * d * d);
  }
  return (floats + busiest) * float_bytes;
}

std::int64_t HgtConvLayout::graph_bytes(const RgcnGraph& graph) const {
  std::int64_t bytes = 0;
  for (int t = 0; t < graph.num_vertex_types(); ++t) {
    if (computes[static_cast<std::size_t>(t)] == 0) continue;
    const graph::RelationStack& stack = graph.stack(t);
    const std::int64_t entries = stack.csr.num_edges();
    const std::int64_t id = graph::index_type_for(std::max(stack.width(), graph.num_outputs(t))) ==
                                    graph::IndexType::i32
                                ? 4
                                : 8;
    // The stack and its transpose: row offsets, column ids and edge ids.
    bytes += (graph.num_outputs(t) + 1 + stack.width() + 1) * 8 + 2 * entries * (id + 8);
  }
  return bytes;
}

HgtConv::HgtConv(const RgcnGraph& graph, std::vector<std::int64_t> in_dims, std::int64_t out_dim,
                 const HgtConvOptions& options, const std::string& name, kernels::Device device)
    : HgtConv(graph, HgtConvLayout(graph, std::move(in_dims), out_dim, options, name), name, device) {}

HgtConv::HgtConv(const RgcnGraph& graph, HgtConvLayout layout, const std::string& name, kernels::Device device)
    : graph_(&graph), name_(name), device_(device), layout_(std::move(layout)), heads_(layout_.heads) {
  const int types = graph.num_vertex_types();
  const auto ts = static_cast<std::size_t>(types);
  input_grad_.assign(ts, 1);
  const std::int64_t f = layout_.out_dim, d = f / heads_;
  kqv_weight_.resize(ts);
  kqv_bias_.resize(ts);
  out_weight_.resize(ts);
  out_bias_.resize(ts);
  skip_.resize(ts);
  stacks_.resize(ts);
  transposes_.resize(ts);
  selection_.resize(ts);
  for (int t = 0; t < types; ++t) {
    const auto tt = static_cast<std::size_t>(t);
    const std::string type = graph.vertex_type_name(t);
    if (reads(t)) {
      kqv_weight_[tt] = make_parameter(name + "." + type + ".kqv.weight", layout_.in_dims[tt], 3 * f, device);
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
  for (int r : layout_.computed) {
    const std::string key = name + "." + graph.relation_type(r).key();
    k_rel_[static_cast<std::size_t>(r)] = make_parameter(key + ".k_rel.weight", heads_ * d, d, device);
    v_rel_[static_cast<std::size_t>(r)] = make_parameter(key + ".v_rel.weight", heads_ * d, d, device);
    prior_[static_cast<std::size_t>(r)] = make_parameter(key + ".prior", 1, heads_, device);
  }
  saved_.resize(ts);
}

void HgtConv::check_output(int type) const {
  HALO_EXPECTS(type >= 0 && type < graph_->num_vertex_types() && computes(type),
               "HgtConv " + name_ + ": type " + std::to_string(type) + " is not one of its outputs");
}

void HgtConv::set_training_rows(int type, kernels::IndexView rows) {
  check_output(type);
  selection_[static_cast<std::size_t>(type)] =
      TrainingRows(rows, graph_->num_outputs(type), device_, "HgtConv " + name_, graph_->vertex_type_name(type));
  pending_ = false;
}

std::int64_t HgtConv::training_rows(int type) const {
  check_output(type);
  return selection_[static_cast<std::size_t>(type)].count(graph_->num_outputs(type));
}

Tensor HgtConv::composed_key_weight(int r) const {
  const std::int64_t d = layout_.out_dim / heads_;
  std::vector<float> w = k_rel_[static_cast<std::size_t>(r)].value.to_vector();
  const std::vector<float> mu = prior_[static_cast<std::size_t>(r)].value.to_vector();
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (std::int64_t h = 0; h < heads_; ++h)
    for (std::int64_t k = h * d * d; k < (h + 1) * d * d; ++k)
      w[static_cast<std::size_t>(k)] *= mu[static_cast<std::size_t>(h)] * scale;
  return Tensor::from_vector(heads_ * d, d, w, device_);
}

ConstTensorView HgtConv::head_columns(const Tensor& kqv, int kind, std::int64_t h) const {
  const std::int64_t d = layout_.out_dim / heads_;
  return kqv.view().slice_cols(kind * layout_.out_dim + h * d, kind * layout_.out_dim + (h + 1) * d);
}

std::vector<Tensor> HgtConv::forward(const std::vector<ConstTensorView>& x, const Step& step,
                                     const std::vector<InputMatrix>& streamed_x) {
  for (const InputMatrix& m : streamed_x)
    if (!m.empty()) throw UnsupportedError("HgtConv " + name_ + ": takes no streamed input");
  const RgcnGraph& g = *graph_;
  const int types = g.num_vertex_types();
  HALO_EXPECTS(static_cast<int>(x.size()) == types, "HgtConv " + name_ + ": needs one input per vertex type (" +
                                                        std::to_string(types) + "), got " + std::to_string(x.size()));
  const std::int64_t f = layout_.out_dim, d = layout_.out_dim / heads_;
  pending_ = false;
  kqv_.clear();
  kqv_.resize(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    if (!reads(t)) continue;
    const auto tt = static_cast<std::size_t>(t);
    HALO_EXPECTS(x[tt].rows == g.num_inputs(t) && x[tt].cols == layout_.in_dims[tt],
                 "HgtConv " + name_ + ": input of " + g.vertex_type_name(t) + " is " + std::to_string(x[tt].rows) +
                     " x " + std::to_string(x[tt].cols) + ", expected " + std::to_string(g.num_inputs(t)) + " x " +
                     std::to_string(layout_.in_dims[tt]));
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
    if (step.training && selection_[tt].selected()) y[tt] = selection_[tt].gather(y[tt].view());
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

std::vector<Tensor> HgtConv::backward(std::vector<Tensor> grad_y, const Step& /*step*/,
                                      const RowGradientSink& /*sink*/) {
  HALO_EXPECTS(pending_, "HgtConv " + name_ + ": backward needs a training forward before it");
  pending_ = false;
  const RgcnGraph& g = *graph_;
  const int types = g.num_vertex_types();
  const std::int64_t f = layout_.out_dim, d = layout_.out_dim / heads_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<Tensor> grad_kqv(static_cast<std::size_t>(types)), grad_x(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    const auto tt = static_cast<std::size_t>(t);
    if (reads(t)) grad_kqv[tt] = Tensor::zeros(g.num_inputs(t), 3 * f, device_);
    if (reads(t) && input_grad(t)) grad_x[tt] = Tensor::zeros(g.num_inputs(t), layout_.in_dims[tt], device_);
  }
  for (int t = 0; t < types; ++t) {
    if (!computes(t)) continue;
    const auto tt = static_cast<std::size_t>(t);
    const std::int64_t n = g.num_outputs(t);
    Saved& s = saved_[tt];
    Tensor& dy = grad_y.at(tt);
    HALO_EXPECTS(dy.rows() == training_rows(t) && dy.cols() == f,
                 "HgtConv " + name_ + ": gradient of " + g.vertex_type_name(t) + " is " + std::to_string(dy.rows()) +
                     " x " + std::to_string(dy.cols()));
    if (selection_[tt].selected()) dy = selection_[tt].scatter(dy.view(), n);
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
  for (int r : layout_.computed) {
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

void HgtConv::initialize(std::uint64_t seed, std::uint64_t first_stream, float weight_decay) {
  std::uint64_t stream = first_stream;
  for (Parameter* p : parameters()) {
    const std::string& n = p->name;
    const auto ends_with = [&n](const std::string& tail) {
      return n.size() >= tail.size() && n.compare(n.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (ends_with(".weight")) {
      glorot_uniform(p->value, seed, stream);
      p->weight_decay = weight_decay;
    } else if (ends_with(".prior") || ends_with(".skip")) {
      p->value.fill(1.0f);
    }
    ++stream;
  }
}

}  // namespace halo::train
