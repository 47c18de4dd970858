// RgcnGraph and RgcnConv: the relation stacks, and the layer's forward and backward as one
// segmented GEMM plus one SpMM per destination type.
#include "train/rgcn_conv.hpp"

#include <utility>

#include "graph/base/error.hpp"
#include "graph/build.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "kernels/segmented_gemm.hpp"
#include "kernels/spmm.hpp"
#include "train/init.hpp"

namespace halo::train {

using kernels::ConstTensorView;
using kernels::GemmSegment;
using kernels::Tensor;
using kernels::TensorView;
using kernels::Transpose;

RgcnGraph::RgcnGraph(const graph::HeteroGraph& g, graph::IndexType index_type) {
  graph::RelationStackOptions options;
  options.index_type = index_type;
  for (int t = 0; t < g.num_vertex_types(); ++t) type_names_.push_back(g.vertex_type_name(t));
  relations_.resize(static_cast<std::size_t>(g.num_relations()));
  for (int r = 0; r < g.num_relations(); ++r) {
    Relation& rel = relations_[static_cast<std::size_t>(r)];
    rel.type = g.relation_type(r);
    rel.src = g.vertex_type(rel.type.src);
    rel.dst = g.vertex_type(rel.type.dst);
    rel.rows = g.vertex_count(rel.src);
  }
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    graph::RelationStack s = graph::stack_relations(g, t, options);
    type_rows_.push_back(stacked_rows_);
    for (int k = 0; k < s.num_blocks(); ++k)
      relations_[static_cast<std::size_t>(s.relations[static_cast<std::size_t>(k)])].row =
          stacked_rows_ + s.block_offsets[static_cast<std::size_t>(k)];
    stacked_rows_ += s.width();
    transposes_.push_back(graph::transpose(s.csr));
    stacks_.push_back(std::move(s));
  }
}

RgcnConv::RgcnConv(const RgcnGraph& graph, std::vector<std::int64_t> in_dims, std::int64_t out_dim, int num_bases,
                   bool bias, const std::string& name, kernels::Device device)
    : graph_(&graph),
      name_(name),
      in_dims_(std::move(in_dims)),
      out_dim_(out_dim),
      num_bases_(num_bases),
      has_bias_(bias),
      device_(device) {
  const int types = graph.num_vertex_types();
  const int relations = graph.num_relations();
  HALO_EXPECTS(static_cast<int>(in_dims_.size()) == types, "RgcnConv " + name + ": expected one input width per " +
                                                               "vertex type (" + std::to_string(types) + "), got " +
                                                               std::to_string(in_dims_.size()));
  for (std::int64_t d : in_dims_)
    HALO_EXPECTS(d > 0, "RgcnConv " + name + ": input widths must be positive, got " + std::to_string(d));
  HALO_EXPECTS(out_dim > 0, "RgcnConv " + name + ": out_dim must be positive, got " + std::to_string(out_dim));
  HALO_EXPECTS(num_bases >= 0, "RgcnConv " + name + ": num_bases must be >= 0, got " + std::to_string(num_bases));
  HALO_EXPECTS(num_bases == 0 || relations > 0, "RgcnConv " + name + ": bases need at least one relation");
  if (num_bases_ == 0) {
    for (int r = 0; r < relations; ++r)
      weights_.push_back(make_parameter(name + ".weight." + graph.relation_type(r).key(),
                                        in_dims_[static_cast<std::size_t>(graph.relation_src(r))], out_dim, device));
  } else {
    const std::int64_t in = in_dims_[static_cast<std::size_t>(graph.relation_src(0))];
    for (int r = 1; r < relations; ++r) {
      const std::int64_t w = in_dims_[static_cast<std::size_t>(graph.relation_src(r))];
      HALO_EXPECTS(w == in, "RgcnConv " + name + ": bases need one input width for all relations; relation " +
                                graph.relation_type(0).key() + " reads " + std::to_string(in) + " columns, relation " +
                                graph.relation_type(r).key() + " reads " + std::to_string(w));
    }
    bases_ = make_parameter(name + ".bases", num_bases * in, out_dim, device);
    comp_ = make_parameter(name + ".comp", relations, num_bases, device);
    composed_ = Tensor::zeros(relations * in, out_dim, device);
  }
  for (int t = 0; t < types; ++t) {
    roots_.push_back(make_parameter(name + ".root." + graph.vertex_type_name(t), in_dims_[static_cast<std::size_t>(t)],
                                    out_dim, device));
    if (has_bias_) biases_.push_back(make_parameter(name + ".bias." + graph.vertex_type_name(t), 1, out_dim, device));
  }
  input_grad_.assign(static_cast<std::size_t>(types), 1);
}

ConstTensorView RgcnConv::weight_view(int r) const {
  if (num_bases_ == 0) return weights_[static_cast<std::size_t>(r)].value.view();
  const std::int64_t in = bases_.value.rows() / num_bases_;
  return composed_.view().slice_rows(r * in, (r + 1) * in);
}

void RgcnConv::check_inputs(const std::vector<ConstTensorView>& x) const {
  HALO_EXPECTS(static_cast<int>(x.size()) == graph_->num_vertex_types(),
               "RgcnConv " + name_ + ": expected one input per vertex type (" +
                   std::to_string(graph_->num_vertex_types()) + "), got " + std::to_string(x.size()));
  for (int t = 0; t < graph_->num_vertex_types(); ++t) {
    const ConstTensorView& v = x[static_cast<std::size_t>(t)];
    const std::int64_t rows = graph_->num_vertices(t);
    const std::int64_t cols = in_dims_[static_cast<std::size_t>(t)];
    HALO_EXPECTS(v.rows == rows && v.cols == cols, "RgcnConv " + name_ + ": input of type " +
                                                       graph_->vertex_type_name(t) + " is " + std::to_string(v.rows) +
                                                       " x " + std::to_string(v.cols) + ", expected " +
                                                       std::to_string(rows) + " x " + std::to_string(cols));
    HALO_EXPECTS(v.device == device_, "RgcnConv " + name_ + ": input of type " + graph_->vertex_type_name(t) +
                                          " is on " + v.device.to_string() + ", the parameters on " +
                                          device_.to_string());
  }
}

// W (relations x in·out) = a (relations x B) · V (B x in·out): the stacked weights and bases
// are row-major, so each W_r and V_b is one row of these flat views.
void RgcnConv::compose_weights() {
  const std::int64_t flat = bases_.value.numel() / num_bases_;
  const ConstTensorView v{bases_.value.data(), num_bases_, flat, flat, device_};
  const TensorView w{composed_.data(), graph_->num_relations(), flat, flat, device_};
  kernels::gemm(comp_.value.view(), Transpose::no, v, Transpose::no, w);
}

std::vector<Tensor> RgcnConv::forward(const std::vector<ConstTensorView>& x, const Step& step) {
  check_inputs(x);
  saved_ = false;
  inputs_.clear();
  if (num_bases_ > 0) compose_weights();
  const RgcnGraph& g = *graph_;
  const int types = g.num_vertex_types();
  Tensor h = Tensor::empty(g.stacked_rows(), out_dim_, device_);
  std::vector<Tensor> y;
  std::vector<GemmSegment> segments;
  for (int r = 0; r < g.num_relations(); ++r)
    segments.push_back({x[static_cast<std::size_t>(g.relation_src(r))], weight_view(r),
                        h.view().slice_rows(g.block_row(r), g.block_row(r) + g.relation_rows(r))});
  for (int t = 0; t < types; ++t) {
    y.push_back(Tensor::empty(g.num_vertices(t), out_dim_, device_));
    segments.push_back(
        {x[static_cast<std::size_t>(t)], roots_[static_cast<std::size_t>(t)].value.view(), y.back().view()});
  }
  kernels::segmented_gemm(segments, Transpose::no, Transpose::no);
  for (int t = 0; t < types; ++t) {
    const graph::RelationStack& s = g.stack(t);
    if (s.num_blocks() > 0)
      kernels::spmm(s.csr, h.view().slice_rows(g.type_row(t), g.type_row(t) + s.width()),
                    y[static_cast<std::size_t>(t)].view(), kernels::Accumulate::add);
    if (has_bias_)
      kernels::add_bias(y[static_cast<std::size_t>(t)].view(), biases_[static_cast<std::size_t>(t)].value.view());
  }
  if (step.training) {
    inputs_ = x;
    saved_ = true;
  }
  return y;
}

std::vector<Tensor> RgcnConv::backward(std::vector<Tensor> grad_y, const Step& /*step*/) {
  HALO_EXPECTS(saved_, "RgcnConv " + name_ + ": backward needs a training forward before it");
  const RgcnGraph& g = *graph_;
  const int types = g.num_vertex_types();
  HALO_EXPECTS(static_cast<int>(grad_y.size()) == types, "RgcnConv " + name_ + ": expected one gradient per vertex " +
                                                             "type (" + std::to_string(types) + "), got " +
                                                             std::to_string(grad_y.size()));
  for (int t = 0; t < types; ++t) {
    const Tensor& gy = grad_y[static_cast<std::size_t>(t)];
    HALO_EXPECTS(gy.rows() == g.num_vertices(t) && gy.cols() == out_dim_ && gy.device() == device_,
                 "RgcnConv " + name_ + ": gradient of type " + g.vertex_type_name(t) + " is " +
                     std::to_string(gy.rows()) + " x " + std::to_string(gy.cols()) + " on " + gy.device().to_string() +
                     ", the output " + std::to_string(g.num_vertices(t)) + " x " + std::to_string(out_dim_) + " on " +
                     device_.to_string());
  }
  saved_ = false;
  const std::vector<ConstTensorView> x = std::move(inputs_);
  inputs_.clear();

  // The gradient of H: each type's range of blocks is written by that type's transposed stack.
  Tensor grad_h = Tensor::empty(g.stacked_rows(), out_dim_, device_);
  for (int t = 0; t < types; ++t) {
    if (has_bias_)
      kernels::column_sums(grad_y[static_cast<std::size_t>(t)].view(), biases_[static_cast<std::size_t>(t)].grad.view(),
                           true);
    const graph::RelationStack& s = g.stack(t);
    if (s.num_blocks() > 0)
      kernels::spmm(g.stack_transpose(t), grad_y[static_cast<std::size_t>(t)].view(),
                    grad_h.view().slice_rows(g.type_row(t), g.type_row(t) + s.width()));
  }
  const auto block = [&](int r) {
    return grad_h.view().slice_rows(g.block_row(r), g.block_row(r) + g.relation_rows(r));
  };

  // Weight gradients. With bases, the W_r's gradients are gathered in one zeroed stack first.
  Tensor grad_composed;
  if (num_bases_ > 0) grad_composed = Tensor::zeros(composed_.rows(), composed_.cols(), device_);
  std::vector<GemmSegment> segments;
  for (int r = 0; r < g.num_relations(); ++r) {
    const TensorView grad_w =
        num_bases_ == 0 ? weights_[static_cast<std::size_t>(r)].grad.view()
                        : grad_composed.view().slice_rows(r * weight_view(r).rows, (r + 1) * weight_view(r).rows);
    segments.push_back({x[static_cast<std::size_t>(g.relation_src(r))], block(r), grad_w});
  }
  for (int t = 0; t < types; ++t)
    segments.push_back({x[static_cast<std::size_t>(t)], grad_y[static_cast<std::size_t>(t)].view(),
                        roots_[static_cast<std::size_t>(t)].grad.view()});
  kernels::segmented_gemm(segments, Transpose::yes, Transpose::no, 1.0f, 1.0f);
  if (num_bases_ > 0) {
    const std::int64_t flat = bases_.value.numel() / num_bases_;
    const std::int64_t relations = g.num_relations();
    const ConstTensorView v{bases_.value.data(), num_bases_, flat, flat, device_};
    const TensorView grad_v{bases_.grad.data(), num_bases_, flat, flat, device_};
    const ConstTensorView grad_w{grad_composed.data(), relations, flat, flat, device_};
    kernels::gemm(comp_.value.view(), Transpose::yes, grad_w, Transpose::no, grad_v, 1.0f, 1.0f);
    kernels::gemm(grad_w, Transpose::no, v, Transpose::yes, comp_.grad.view(), 1.0f, 1.0f);
  }

  // Input gradients: every type's root term first, then its relations in order, into one zeroed
  // tensor per type.
  std::vector<Tensor> grad_x(static_cast<std::size_t>(types));
  segments.clear();
  for (int s = 0; s < types; ++s) {
    if (!input_grad(s)) continue;
    Tensor& gx = grad_x[static_cast<std::size_t>(s)];
    gx = Tensor::zeros(g.num_vertices(s), in_dims_[static_cast<std::size_t>(s)], device_);
    segments.push_back(
        {grad_y[static_cast<std::size_t>(s)].view(), roots_[static_cast<std::size_t>(s)].value.view(), gx.view()});
    for (int r = 0; r < g.num_relations(); ++r)
      if (g.relation_src(r) == s) segments.push_back({block(r), weight_view(r), gx.view()});
  }
  kernels::segmented_gemm(segments, Transpose::no, Transpose::yes, 1.0f, 1.0f);
  return grad_x;
}

std::vector<Parameter*> RgcnConv::parameters() {
  std::vector<Parameter*> out;
  if (num_bases_ == 0) {
    for (Parameter& p : weights_) out.push_back(&p);
  } else {
    out.push_back(&bases_);
    out.push_back(&comp_);
  }
  for (Parameter& p : roots_) out.push_back(&p);
  for (Parameter& p : biases_) out.push_back(&p);
  return out;
}

void RgcnConv::set_input_grad(int type, bool needed) {
  HALO_EXPECTS(type >= 0 && type < graph_->num_vertex_types(), "RgcnConv " + name_ + ": no vertex type " +
                                                                   std::to_string(type) + " (there are " +
                                                                   std::to_string(graph_->num_vertex_types()) + ")");
  input_grad_[static_cast<std::size_t>(type)] = needed ? 1 : 0;
}

Parameter* RgcnConv::relation_weight(int r) {
  return num_bases_ == 0 ? &weights_.at(static_cast<std::size_t>(r)) : nullptr;
}

std::int64_t RgcnConv::saved_bytes() const { return static_cast<std::int64_t>(composed_.bytes()); }

std::int64_t RgcnConv::workspace_bytes() const {
  return graph_->stacked_rows() * out_dim_ * static_cast<std::int64_t>(sizeof(float));
}

}  // namespace halo::train
