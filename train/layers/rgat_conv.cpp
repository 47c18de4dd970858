// RgatConv: per-relation GAT layers over the blocks of each destination's relation stack, summed.
#include "train/layers/rgat_conv.hpp"

#include <algorithm>
#include <type_traits>
#include <utility>

#include "graph/base/error.hpp"
#include "graph/build.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "train/layers/init.hpp"

namespace halo::train {

using kernels::ConstTensorView;
using kernels::Tensor;
using kernels::Transpose;

namespace {

constexpr std::int64_t float_bytes = static_cast<std::int64_t>(sizeof(float));

}  // namespace

RgatConvLayout::RgatConvLayout(const RgcnGraph& graph, std::vector<std::int64_t> input_widths,
                               std::int64_t output_width, const RgatConvOptions& layer_options, const std::string& name)
    : in_dims(std::move(input_widths)), out_dim(output_width), options(layer_options) {
  const int types = graph.num_vertex_types();
  HALO_EXPECTS(static_cast<int>(in_dims.size()) == types,
               "RgatConv " + name + ": needs one input width per vertex type (" + std::to_string(types) + "), got " +
                   std::to_string(in_dims.size()));
  HALO_EXPECTS(out_dim > 0 && options.heads > 0, "RgatConv " + name + ": needs positive widths and heads, got " +
                                                     std::to_string(out_dim) + " and " + std::to_string(options.heads) +
                                                     " heads");
  HALO_EXPECTS(
      options.attention_dropout >= 0.0f && options.attention_dropout < 1.0f,
      "RgatConv " + name + ": attention dropout must be in [0, 1), got " + std::to_string(options.attention_dropout));
  HALO_EXPECTS(graph.num_relations() < 65536,
               "RgatConv " + name + ": at most 65535 relations, got " + std::to_string(graph.num_relations()));
  computes.assign(static_cast<std::size_t>(types), options.outputs.empty() ? 1 : 0);
  for (int t : options.outputs) {
    HALO_EXPECTS(t >= 0 && t < types, "RgatConv " + name + ": output type " + std::to_string(t) + " out of range");
    computes[static_cast<std::size_t>(t)] = 1;
  }
  reads.assign(static_cast<std::size_t>(types), 0);
  for (int r = 0; r < graph.num_relations(); ++r) {
    const int s = graph.relation_src(r), t = graph.relation_dst(r);
    if (computes[static_cast<std::size_t>(t)] == 0) continue;
    computed.push_back(r);
    reads[static_cast<std::size_t>(s)] = reads[static_cast<std::size_t>(t)] = 1;
  }
  for (int t = 0; t < types; ++t)
    HALO_EXPECTS(reads[static_cast<std::size_t>(t)] == 0 || in_dims[static_cast<std::size_t>(t)] > 0,
                 "RgatConv " + name + ": type " + graph.vertex_type_name(t) + " is read but has input width " +
                     std::to_string(in_dims[static_cast<std::size_t>(t)]));
}

std::int64_t RgatConvLayout::parameter_bytes(const RgcnGraph& graph) const {
  const std::int64_t hf = options.heads * out_dim;
  std::int64_t floats = 0;
  for (int r : computed)
    floats += (in_dims[static_cast<std::size_t>(graph.relation_src(r))] +
               in_dims[static_cast<std::size_t>(graph.relation_dst(r))]) *
                  hf +
              2 * hf + out_width();
  return floats * float_bytes;
}

namespace {

// Floats one relation keeps from forward to backward (h_r, the folded W_dst,r, both scores and the
// softmax statistics), and the most its backward adds while it runs (the attention's output
// gradient when the heads are averaged, h_r's and both scores' gradients, the attention kernel's
// packed rows (4 per head) and the folded weight's gradient). h: heads, hf: heads x columns per head.
std::int64_t relation_saved_floats(const RgcnGraph& graph, const RgatConvLayout& l, int r, std::int64_t h,
                                   std::int64_t hf) {
  const std::int64_t sources = graph.num_inputs(graph.relation_src(r));
  const std::int64_t rows = graph.num_outputs(graph.relation_dst(r));
  return sources * (hf + h) + rows * 3 * h + l.in_dims[static_cast<std::size_t>(graph.relation_dst(r))] * h;
}

std::int64_t relation_workspace_floats(const RgcnGraph& graph, const RgatConvLayout& l, int r, std::int64_t h,
                                       std::int64_t hf) {
  const std::int64_t sources = graph.num_inputs(graph.relation_src(r));
  const std::int64_t rows = graph.num_outputs(graph.relation_dst(r));
  const std::int64_t head_grad = l.options.concat ? 0 : rows * hf;  // only when the heads are averaged
  return head_grad + rows * 5 * h + sources * (hf + h) + l.in_dims[static_cast<std::size_t>(graph.relation_dst(r))] * h;
}

}  // namespace

std::int64_t RgatConvLayout::saved_bytes(const RgcnGraph& graph) const {
  const std::int64_t h = options.heads, hf = h * out_dim;
  std::int64_t floats = 0;
  for (int r : computed) floats += relation_saved_floats(graph, *this, r, h, hf);
  return floats * float_bytes;
}

std::int64_t RgatConvLayout::backward_held_bytes(const RgcnGraph& graph, const std::vector<char>& chunked) const {
  const std::int64_t h = options.heads, hf = h * out_dim;
  std::int64_t remaining = saved_bytes(graph) / float_bytes, deferred = 0, most = remaining;
  for (int t = 0; t < graph.num_vertex_types(); ++t) {
    if (computes[static_cast<std::size_t>(t)] == 0) continue;
    for (int r : graph.stack(t).relations) {
      const std::int64_t fold = in_dims[static_cast<std::size_t>(t)] * h;
      most = std::max(most, remaining + deferred + relation_workspace_floats(graph, *this, r, h, hf));
      // Freed but the fold; kept until the end: the destination scores' gradient and the fold's,
      // and dh_r when its source is read chunk by chunk.
      remaining -= relation_saved_floats(graph, *this, r, h, hf) - fold;
      deferred += graph.num_outputs(t) * h + 2 * fold;
      const auto src = static_cast<std::size_t>(graph.relation_src(r));
      if (!chunked.empty() && chunked.at(src) != 0) deferred += graph.num_inputs(graph.relation_src(r)) * hf;
    }
  }
  return std::max(most, remaining + deferred) * float_bytes;
}

std::int64_t RgatConvLayout::graph_bytes(const RgcnGraph& graph) const {
  std::int64_t bytes = 0;
  for (int r : computed) {
    const std::int64_t rows = graph.num_outputs(graph.relation_dst(r));
    const std::int64_t cols = graph.num_inputs(graph.relation_src(r));
    const std::int64_t entries = graph.relation_edges(r);
    bytes += 8 * (rows + 1 + cols + 1) + 2 * entries * (8 + 4);
  }
  return bytes;
}

RgatConv::RgatConv(const RgcnGraph& graph, RgatConvLayout layout, const std::string& name, kernels::Device device)
    : graph_(&graph), name_(name), device_(device), layout_(std::move(layout)) {
  const int types = graph.num_vertex_types();
  const std::int64_t heads = layout_.options.heads, f = layout_.out_dim;
  input_grad_.assign(static_cast<std::size_t>(types), 1);
  selection_.resize(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    if (!computes(t)) continue;
    const graph::RelationStack& stack = graph.stack(t);
    for (int k = 0; k < stack.num_blocks(); ++k) {
      Relation rel;
      rel.index = stack.relations[static_cast<std::size_t>(k)];
      rel.src = graph.relation_src(rel.index);
      rel.dst = t;
      const std::string key = name + "." + graph.relation_type(rel.index).key();
      rel.lin_src = make_parameter(key + ".lin_src.weight", layout_.in_dims[static_cast<std::size_t>(rel.src)],
                                   heads * f, device);
      rel.lin_dst =
          make_parameter(key + ".lin_dst.weight", layout_.in_dims[static_cast<std::size_t>(t)], heads * f, device);
      rel.att_src = make_parameter(key + ".att_src", heads, f, device);
      rel.att_dst = make_parameter(key + ".att_dst", heads, f, device);
      rel.bias = make_parameter(key + ".bias", 1, layout_.out_width(), device);
      graph::CsrGraph block = graph::stack_block(stack, k);
      rel.transpose = CsrOperator(graph::transpose(block), device);
      rel.block = CsrOperator(std::move(block), device);
      relations_.push_back(std::move(rel));
    }
  }
  // The stacks list their relations in relation order per type; the parameters follow relation order.
  std::sort(relations_.begin(), relations_.end(),
            [](const Relation& a, const Relation& b) { return a.index < b.index; });
  if (!layout_.options.concat) {
    std::vector<float> mean(static_cast<std::size_t>(heads * f * f), 0.0f);
    for (std::int64_t k = 0; k < heads; ++k)
      for (std::int64_t c = 0; c < f; ++c)
        mean[static_cast<std::size_t>((k * f + c) * f + c)] = 1.0f / static_cast<float>(heads);
    head_mean_ = Tensor::from_vector(heads * f, f, mean, device);
  }
}

kernels::AttentionSpec RgatConv::spec(const Relation& rel, const Step& step) const {
  // One key per (layer, relation): an edge present in two relations draws two masks.
  const auto key = static_cast<std::uint32_t>((layout_.options.layer << 16) | static_cast<std::uint32_t>(rel.index));
  return {layout_.options.heads,
          layout_.options.negative_slope,
          step.training ? layout_.options.attention_dropout : 0.0f,
          {step.seed, step.epoch, key}};
}

kernels::AttentionIds RgatConv::ids(const Relation& rel) const {
  if (!rel.dst_ids) return {};
  return {&*rel.dst_ids, &*rel.src_ids};
}

void RgatConv::set_vertex_ids(const std::vector<kernels::IndexView>& ids) {
  const RgcnGraph& g = *graph_;
  HALO_EXPECTS(static_cast<int>(ids.size()) == g.num_vertex_types(),
               "RgatConv " + name_ + ": needs the ids of every vertex type (" + std::to_string(g.num_vertex_types()) +
                   "), got " + std::to_string(ids.size()));
  std::int64_t limit = 0;
  for (const kernels::IndexView& v : ids)
    for (std::int64_t i = 0; i < v.size; ++i) limit = std::max(limit, v.data[i] + 1);
  for (Relation& rel : relations_) {
    const kernels::IndexView src = ids[static_cast<std::size_t>(rel.src)];
    const kernels::IndexView dst = ids[static_cast<std::size_t>(rel.dst)];
    HALO_EXPECTS(src.size == g.num_inputs(rel.src) && dst.size == g.num_inputs(rel.dst),
                 "RgatConv " + name_ + ": ids of " + std::to_string(src.size) + " and " + std::to_string(dst.size) +
                     " rows for the " + std::to_string(g.num_inputs(rel.src)) + " and " +
                     std::to_string(g.num_inputs(rel.dst)) + " input rows of relation " +
                     g.relation_type(rel.index).key());
    rel.dst_ids.emplace(kernels::IndexView{dst.data, g.num_outputs(rel.dst)}, limit, device_, kernels::IndexUse::rows,
                        "RgatConv");
    rel.src_ids.emplace(src, limit, device_, kernels::IndexUse::rows, "RgatConv");
  }
}

void RgatConv::check_output(int type) const {
  HALO_EXPECTS(type >= 0 && type < graph_->num_vertex_types() && computes(type),
               "RgatConv " + name_ + ": type " + std::to_string(type) + " is not one of its outputs");
}

void RgatConv::set_training_rows(int type, kernels::IndexView rows) {
  check_output(type);
  selection_[static_cast<std::size_t>(type)] =
      TrainingRows(rows, graph_->num_outputs(type), device_, "RgatConv " + name_, graph_->vertex_type_name(type));
  pending_ = false;
}

std::int64_t RgatConv::training_rows(int type) const {
  check_output(type);
  return selection_[static_cast<std::size_t>(type)].count(graph_->num_outputs(type));
}

std::vector<Tensor> RgatConv::forward(const std::vector<ConstTensorView>& x, const Step& step,
                                      const std::vector<InputMatrix>& streamed_x) {
  const RgcnGraph& g = *graph_;
  const int types = g.num_vertex_types();
  HALO_EXPECTS(static_cast<int>(x.size()) == types, "RgatConv " + name_ + ": needs one input per vertex type (" +
                                                        std::to_string(types) + "), got " + std::to_string(x.size()));
  HALO_EXPECTS(streamed_x.empty() || static_cast<int>(streamed_x.size()) == types,
               "RgatConv " + name_ + ": needs no chunk-read inputs or one (possibly empty) per vertex type (" +
                   std::to_string(types) + "), got " + std::to_string(streamed_x.size()));
  // Every input as a matrix read through products: the caller's chunk-read one, or the view.
  std::vector<InputMatrix> in(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    const auto ts = static_cast<std::size_t>(t);
    const bool chunked = !streamed_x.empty() && !streamed_x[ts].empty();
    if (!reads(t)) {
      if (chunked) throw UnsupportedError("RgatConv " + name_ + ": does not read " + g.vertex_type_name(t));
      continue;
    }
    in[ts] = chunked ? streamed_x[ts] : InputMatrix(x[ts]);
    HALO_EXPECTS(in[ts].rows() == g.num_inputs(t) && in[ts].cols() == layout_.in_dims[ts],
                 "RgatConv " + name_ + ": input of " + g.vertex_type_name(t) + " is " + std::to_string(in[ts].rows()) +
                     " x " + std::to_string(in[ts].cols()) + ", expected " + std::to_string(g.num_inputs(t)) + " x " +
                     std::to_string(layout_.in_dims[ts]));
  }
  pending_ = false;
  const std::int64_t heads = layout_.options.heads, hf = heads * layout_.out_dim;
  std::vector<Tensor> y(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t)
    if (computes(t)) y[static_cast<std::size_t>(t)] = Tensor::zeros(g.num_outputs(t), layout_.out_width(), device_);
  // Every product of an input in one pass over it (one read of each chunk, and of a dropout on it):
  // h_r = x_src · W_src,r for the relations it is the source of, and the destination scores of
  // those into it, x_t · W_dst,r read only through them: a_dst,r folded into W_dst,r (in_t x H),
  // H columns where the projection has H·F.
  std::vector<std::vector<InputMatrix::Product>> products(static_cast<std::size_t>(types));
  for (Relation& rel : relations_) {
    rel.h = Tensor::empty(g.num_inputs(rel.src), hf, device_);
    rel.dst_fold = Tensor::empty(rel.lin_dst.value.rows(), heads, device_);
    kernels::head_scores(rel.lin_dst.value.view(), rel.att_dst.value.view(), rel.dst_fold.view());
    rel.dst_score = Tensor::empty(g.num_outputs(rel.dst), heads, device_);
    products[static_cast<std::size_t>(rel.src)].push_back({rel.lin_src.value.view(), rel.h.view()});
    products[static_cast<std::size_t>(rel.dst)].push_back({rel.dst_fold.view(), rel.dst_score.view()});
  }
  for (int t = 0; t < types; ++t)
    if (!products[static_cast<std::size_t>(t)].empty())
      in[static_cast<std::size_t>(t)].multiply_each(products[static_cast<std::size_t>(t)]);
  for (Relation& rel : relations_) {
    const std::int64_t rows = g.num_outputs(rel.dst);
    rel.src_score = Tensor::empty(rel.h.rows(), heads, device_);
    kernels::head_scores(rel.h.view(), rel.att_src.value.view(), rel.src_score.view());
    rel.row_max = Tensor::empty(rows, heads, device_);
    rel.row_sum = Tensor::empty(rows, heads, device_);
    Tensor out = Tensor::empty(rows, hf, device_);
    rel.block.visit([&](const auto& a) {
      kernels::attention_forward(a, rel.h.view(), rel.src_score.view(), rel.dst_score.view(), spec(rel, step), ids(rel),
                                 out.view(), rel.row_max.view(), rel.row_sum.view());
    });
    Tensor& yt = y[static_cast<std::size_t>(rel.dst)];
    if (layout_.options.concat)
      kernels::axpby(1.0f, out.view(), 1.0f, yt.view());
    else
      kernels::gemm(out.view(), Transpose::no, head_mean_.view(), Transpose::no, yt.view(), 1.0f, 1.0f);
    kernels::add_bias(yt.view(), rel.bias.value.view());
    if (!step.training) rel.release();
  }
  for (int t = 0; t < types; ++t) {
    const auto ts = static_cast<std::size_t>(t);
    if (step.training && computes(t) && selection_[ts].selected()) y[ts] = selection_[ts].gather(y[ts].view());
  }
  if (step.training) {
    inputs_ = std::move(in);
    pending_ = true;
  }
  return y;
}

std::vector<Tensor> RgatConv::backward(std::vector<Tensor> grad_y, const Step& step, const RowGradientSink& /*sink*/) {
  HALO_EXPECTS(pending_, "RgatConv " + name_ + ": backward needs a training forward before it");
  pending_ = false;
  const RgcnGraph& g = *graph_;
  const int types = g.num_vertex_types();
  for (int t = 0; t < types; ++t) {
    if (!computes(t)) continue;
    const auto ts = static_cast<std::size_t>(t);
    Tensor& dy = grad_y.at(ts);
    HALO_EXPECTS(dy.rows() == training_rows(t) && dy.cols() == layout_.out_width(),
                 "RgatConv " + name_ + ": gradient of " + g.vertex_type_name(t) + " is " + std::to_string(dy.rows()) +
                     " x " + std::to_string(dy.cols()) + ", expected " + std::to_string(training_rows(t)) + " x " +
                     std::to_string(layout_.out_width()));
    if (selection_[ts].selected()) dy = selection_[ts].scatter(dy.view(), g.num_outputs(t));
  }
  std::vector<Tensor> grad_x(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t)
    if (reads(t) && input_grad(t))
      grad_x[static_cast<std::size_t>(t)] =
          Tensor::zeros(g.num_inputs(t), layout_.in_dims[static_cast<std::size_t>(t)], device_);
  const std::int64_t heads = layout_.options.heads, hf = heads * layout_.out_dim;
  // The products with the inputs wait until every relation is done, then take one pass over each
  // input: the destination side's always (the scores' gradients are H columns), the source side's
  // (dh_r, H·F columns) for an input read chunk by chunk (one pass instead of one per relation).
  std::vector<Tensor> grad_dst(relations_.size()), grad_fold(relations_.size()), grad_hs(relations_.size());
  std::vector<std::vector<InputMatrix::TransposedProduct>> products(static_cast<std::size_t>(types));
  for (std::size_t k = 0; k < relations_.size(); ++k) {
    Relation& rel = relations_[k];
    const Tensor& dy = grad_y[static_cast<std::size_t>(rel.dst)];
    const std::int64_t rows = g.num_outputs(rel.dst);
    kernels::column_sums(dy.view(), rel.bias.grad.view(), true);
    Tensor head_grad;  // d loss / d (the attention's output), when the heads are averaged
    if (!layout_.options.concat) {
      head_grad = Tensor::empty(rows, hf, device_);
      kernels::gemm(dy.view(), Transpose::no, head_mean_.view(), Transpose::yes, head_grad.view());
    }
    grad_hs[k] = Tensor::empty(rel.h.rows(), hf, device_);
    Tensor& grad_h = grad_hs[k];
    Tensor grad_src = Tensor::empty(rel.h.rows(), heads, device_);
    grad_dst[k] = Tensor::empty(rows, heads, device_);
    rel.block.visit([&](const auto& a) {
      rel.transpose.visit([&](const auto& at) {
        if constexpr (std::is_same_v<std::decay_t<decltype(a)>, std::decay_t<decltype(at)>>)
          kernels::attention_backward(a, at, rel.h.view(), rel.src_score.view(), rel.dst_score.view(), spec(rel, step),
                                      ids(rel), rel.row_max.view(), rel.row_sum.view(),
                                      layout_.options.concat ? dy.view() : head_grad.view(), grad_h.view(),
                                      grad_src.view(), grad_dst[k].view());
        else
          HALO_ASSERT(!"a relation block and its transpose with different index types");
      });
    });
    kernels::head_scores_backward(rel.h.view(), rel.att_src.value.view(), grad_src.view(), grad_h.view(),
                                  rel.att_src.grad.view());
    const auto src = static_cast<std::size_t>(rel.src), dst = static_cast<std::size_t>(rel.dst);
    if (input_grad(rel.src))
      kernels::gemm(grad_h.view(), Transpose::no, rel.lin_src.value.view(), Transpose::yes, grad_x[src].view(), 1.0f,
                    1.0f);
    if (inputs_[src].read_whole()) {
      inputs_[src].add_transposed_products({{grad_h.view(), rel.lin_src.grad.view()}});
      grad_hs[k] = Tensor();
    } else {
      products[src].push_back({grad_h.view(), rel.lin_src.grad.view()});
    }
    grad_fold[k] = Tensor::zeros(rel.dst_fold.rows(), heads, device_);
    products[dst].push_back({grad_dst[k].view(), grad_fold[k].view()});
    rel.release_keeping_fold();
  }
  // One pass over each input for what waited: W_src,r's gradients of a chunk-read input, and the
  // folds' (in_t x H); then W_dst,r's and a_dst,r's, and the input's gradient.
  for (int t = 0; t < types; ++t)
    if (!products[static_cast<std::size_t>(t)].empty())
      inputs_[static_cast<std::size_t>(t)].add_transposed_products(products[static_cast<std::size_t>(t)]);
  for (std::size_t k = 0; k < relations_.size(); ++k) {
    Relation& rel = relations_[k];
    kernels::head_scores_backward(rel.lin_dst.value.view(), rel.att_dst.value.view(), grad_fold[k].view(),
                                  rel.lin_dst.grad.view(), rel.att_dst.grad.view());
    if (input_grad(rel.dst))
      kernels::gemm(grad_dst[k].view(), Transpose::no, rel.dst_fold.view(), Transpose::yes,
                    grad_x[static_cast<std::size_t>(rel.dst)].view().slice_rows(0, g.num_outputs(rel.dst)), 1.0f, 1.0f);
    rel.release();
  }
  inputs_.clear();
  return grad_x;
}

std::vector<Parameter*> RgatConv::parameters() {
  std::vector<Parameter*> all;
  for (Relation& rel : relations_)
    for (Parameter* p : {&rel.lin_src, &rel.lin_dst, &rel.att_src, &rel.att_dst, &rel.bias}) all.push_back(p);
  return all;
}

void RgatConv::initialize(std::uint64_t seed, std::uint64_t first_stream, float weight_decay) {
  std::uint64_t stream = first_stream;
  for (Relation& rel : relations_) {
    for (Parameter* p : {&rel.lin_src, &rel.lin_dst}) {
      glorot_uniform(p->value, seed, stream++);
      p->weight_decay = weight_decay;
    }
    glorot_uniform(rel.att_src.value, seed, stream++);
    glorot_uniform(rel.att_dst.value, seed, stream++);
    ++stream;  // the bias stays zero
  }
}

}  // namespace halo::train
