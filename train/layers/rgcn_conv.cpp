// RgcnGraph and RgcnConv: the relation stacks, and the layer's forward and backward in either
// order (transform first: one segmented GEMM and one SpMM per type; aggregate first: an SpMM per
// relation and one segmented GEMM).
#include "train/layers/rgcn_conv.hpp"

#include <algorithm>
#include <utility>

#include "graph/base/error.hpp"
#include "graph/build.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "kernels/segmented_gemm.hpp"
#include "kernels/spmm.hpp"
#include "train/layers/init.hpp"
#include "train/layers/training_rows.hpp"

namespace halo::train {

using kernels::ConstTensorView;
using kernels::GemmSegment;
using kernels::Tensor;
using kernels::TensorView;
using kernels::Transpose;

double RgcnConv::order_cost(const RgcnGraph& graph, const std::vector<std::int64_t>& in_dims, std::int64_t out_dim,
                            int type, RgcnOrder order) {
  const graph::RelationStack& s = graph.stack(type);
  const auto out = static_cast<double>(out_dim);
  double cost = order == RgcnOrder::transform_first ? spmm_cost_ratio * static_cast<double>(s.csr.num_edges()) * out : 0.0;
  for (int r : s.relations) {
    const auto in = static_cast<double>(in_dims.at(static_cast<std::size_t>(graph.relation_src(r))));
    if (order == RgcnOrder::transform_first)
      cost += static_cast<double>(graph.relation_rows(r)) * in * out;
    else
      cost += static_cast<double>(graph.num_outputs(type)) * in * out +
              spmm_cost_ratio * static_cast<double>(graph.relation_edges(r)) * in;
  }
  return cost;
}

RgcnConv::RgcnConv(const RgcnGraph& graph, std::vector<std::int64_t> in_dims, std::int64_t out_dim, int num_bases,
                   bool bias, const std::string& name, kernels::Device device, const RgcnConvOptions& options)
    : RgcnConv(graph, RgcnConvLayout(graph, std::move(in_dims), out_dim, num_bases, bias, options, name), name,
               device) {}

RgcnConv::RgcnConv(const RgcnGraph& graph, RgcnConvLayout layout, const std::string& name, kernels::Device device)
    : graph_(&graph), name_(name), device_(device), layout_(std::move(layout)) {
  const RgcnConvLayout& l = layout_;
  const std::int64_t out_dim = l.out_dim;
  const int types = graph.num_vertex_types();
  const int relations = graph.num_relations();
  if (l.num_bases == 0) {
    for (int r : l.computed)
      weights_.push_back(make_parameter(name + ".weight." + graph.relation_type(r).key(),
                                        l.in_dims[static_cast<std::size_t>(graph.relation_src(r))], out_dim, device));
  } else {
    const std::int64_t in = l.basis_input(graph);
    const auto count = static_cast<std::int64_t>(l.computed.size());
    bases_ = make_parameter(name + ".bases", l.num_bases * in, out_dim, device);
    comp_ = make_parameter(name + ".comp", count, l.num_bases, device);
    composed_ = Tensor::zeros(count * in, out_dim, device);
  }
  roots_.resize(static_cast<std::size_t>(types));
  biases_.resize(static_cast<std::size_t>(types));
  blocks_.resize(static_cast<std::size_t>(relations));
  block_transposes_.resize(static_cast<std::size_t>(relations));
  selected_blocks_.resize(static_cast<std::size_t>(relations));
  selection_.resize(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    if (!computes(t)) continue;
    const auto ts = static_cast<std::size_t>(t);
    roots_[ts] = make_parameter(name + ".root." + graph.vertex_type_name(t), l.in_dims[ts], out_dim, device);
    if (l.bias) biases_[ts] = make_parameter(name + ".bias." + graph.vertex_type_name(t), 1, out_dim, device);
    if (!aggregate(t)) continue;
    // The aggregate-first type's blocks, copied out of its stack, with their transposes.
    const graph::RelationStack& s = graph.stack(t);
    for (int k = 0; k < s.num_blocks(); ++k) {
      const auto r = static_cast<std::size_t>(s.relations[static_cast<std::size_t>(k)]);
      graph::CsrGraph block = graph::stack_block(s, k);
      block_transposes_[r] = CsrOperator(graph::transpose(block), device);
      blocks_[r] = CsrOperator(std::move(block), device);
    }
  }
  panels_ = detail::RgcnPanels(graph, l.panels, device);
  input_grad_.assign(static_cast<std::size_t>(types), 1);
}

void RgcnConv::check_output(int type) const {
  HALO_EXPECTS(type >= 0 && type < graph_->num_vertex_types() && computes(type),
               "RgcnConv " + name_ + ": type " + std::to_string(type) + " is not an output of the layer");
}

RgcnOrder RgcnConv::order(int type) const {
  check_output(type);
  return aggregate(type) ? RgcnOrder::aggregate_first : RgcnOrder::transform_first;
}

void RgcnConv::set_training_rows(int type, kernels::IndexView rows) {
  check_output(type);
  const auto ts = static_cast<std::size_t>(type);
  TrainingRows selection(rows, graph_->num_outputs(type), device_, "RgcnConv " + name_, graph_->vertex_type_name(type));
  if (aggregate(type)) {
    const graph::RelationStack& st = graph_->stack(type);
    for (int k = 0; k < st.num_blocks(); ++k) {
      const auto r = static_cast<std::size_t>(st.relations[static_cast<std::size_t>(k)]);
      graph::CsrGraph block =
          graph::select_rows(graph::stack_block(st, k), selection.rows().data, selection.rows().size);
      block_transposes_[r] = CsrOperator(graph::transpose(block), device_);
      selected_blocks_[r] = CsrOperator(std::move(block), device_);
    }
  }
  selection_[ts] = std::move(selection);
  saved_ = false;  // a forward kept before this has the wrong rows for the new transposes
}

std::int64_t RgcnConv::training_rows(int type) const {
  check_output(type);
  const auto ts = static_cast<std::size_t>(type);
  return selection_[ts].count(graph_->num_outputs(type));
}

ConstTensorView RgcnConv::weight_view(int r) const {
  const int slot = layout_.slot[static_cast<std::size_t>(r)];
  if (layout_.num_bases == 0) return weights_[static_cast<std::size_t>(slot)].value.view();
  const std::int64_t in = bases_.value.rows() / layout_.num_bases;
  return composed_.view().slice_rows(slot * in, (slot + 1) * in);
}

void RgcnConv::check_inputs(const std::vector<ConstTensorView>& x, const std::vector<InputMatrix>& streamed_x) const {
  HALO_EXPECTS(static_cast<int>(x.size()) == graph_->num_vertex_types(),
               "RgcnConv " + name_ + ": expected one input per vertex type (" +
                   std::to_string(graph_->num_vertex_types()) + "), got " + std::to_string(x.size()));
  HALO_EXPECTS(streamed_x.empty() || static_cast<int>(streamed_x.size()) == graph_->num_vertex_types(),
               "RgcnConv " + name_ + ": expected no streamed inputs or one per vertex type (" +
                   std::to_string(graph_->num_vertex_types()) + "), got " + std::to_string(streamed_x.size()));
  for (int t = 0; t < graph_->num_vertex_types(); ++t) {
    if (!reads(t)) continue;
    const std::int64_t rows = graph_->num_inputs(t);
    const std::int64_t cols = layout_.in_dims[static_cast<std::size_t>(t)];
    if (streamed(t)) {
      const InputMatrix* m = streamed_x.empty() ? nullptr : &streamed_x[static_cast<std::size_t>(t)];
      HALO_EXPECTS(m != nullptr && m->streamed() && m->rows() == rows && m->cols() == cols,
                   "RgcnConv " + name_ + ": type " + graph_->vertex_type_name(t) + " needs a streamed input of " +
                       std::to_string(rows) + " x " + std::to_string(cols));
      continue;
    }
    const ConstTensorView& v = x[static_cast<std::size_t>(t)];
    HALO_EXPECTS(v.rows == rows && v.cols == cols, "RgcnConv " + name_ + ": input of type " +
                                                       graph_->vertex_type_name(t) + " is " + std::to_string(v.rows) +
                                                       " x " + std::to_string(v.cols) + ", expected " +
                                                       std::to_string(rows) + " x " + std::to_string(cols));
    HALO_EXPECTS(v.device == device_, "RgcnConv " + name_ + ": input of type " + graph_->vertex_type_name(t) +
                                          " is on " + v.device.to_string() + ", the parameters on " +
                                          device_.to_string());
  }
}

// W (computed x in·out) = a (computed x B) · V (B x in·out): the stacked weights and bases are
// row-major, so each W_r and V_b is one row of these flat views.
void RgcnConv::compose_weights() {
  const std::int64_t flat = bases_.value.numel() / layout_.num_bases;
  const ConstTensorView v{bases_.value.data(), layout_.num_bases, flat, flat, device_};
  const TensorView w{composed_.data(), static_cast<std::int64_t>(layout_.computed.size()), flat, flat, device_};
  kernels::gemm(comp_.value.view(), Transpose::no, v, Transpose::no, w);
}


ConstTensorView RgcnConv::band_weight(const detail::RgcnPanels::Band& band) const {
  return band.relation >= 0 ? weight_view(band.relation) : roots_[static_cast<std::size_t>(band.root)].value.view();
}

TensorView RgcnConv::panel(Tensor& h, int s) const {
  const auto width = static_cast<std::int64_t>(panels_.bands(s).size()) * layout_.out_dim;
  return {h.data() + panels_.base(s) * layout_.out_dim, graph_->num_inputs(s), width, width, device_};
}

std::vector<Tensor> RgcnConv::forward(const std::vector<ConstTensorView>& x, const Step& step,
                                      const std::vector<InputMatrix>& streamed_x) {
  check_inputs(x, streamed_x);
  saved_ = false;
  inputs_.clear();
  streamed_inputs_.clear();
  stacked_inputs_.clear();
  stacked_weights_.clear();
  panel_weights_.clear();
  if (layout_.num_bases > 0) compose_weights();
  const RgcnGraph& g = *graph_;
  const int types = g.num_vertex_types();
  const auto at = [](auto& v, int i) -> decltype(auto) { return v[static_cast<std::size_t>(i)]; };
  std::vector<Tensor> y(static_cast<std::size_t>(types));
  std::vector<Tensor> a(static_cast<std::size_t>(types));  // aggregate-first types: [A_r ... | x_t]
  std::vector<Tensor> w(static_cast<std::size_t>(types));  // and their [W_r; ...; W_root,t]
  std::vector<Tensor> pw(static_cast<std::size_t>(types));  // per source type: its panel's [W_a | W_b | ...]
  std::vector<GemmSegment> products;

  // Transform-first: every source type's panel x_s · [W_a | W_b | ...] into H.
  Tensor h = panels_.empty() ? Tensor() : Tensor::empty(panels_.rows(), layout_.out_dim, device_);
  for (int s = 0; s < types; ++s) {
    const std::vector<detail::RgcnPanels::Band>& bands = panels_.bands(s);
    if (bands.empty()) continue;
    const std::int64_t out_dim = layout_.out_dim;
    at(pw, s) = Tensor::empty(at(layout_.in_dims, s), static_cast<std::int64_t>(bands.size()) * out_dim, device_);
    for (std::int64_t j = 0; j < static_cast<std::int64_t>(bands.size()); ++j)
      kernels::copy(band_weight(bands[static_cast<std::size_t>(j)]),
                    at(pw, s).view().slice_cols(j * out_dim, (j + 1) * out_dim));
    if (streamed(s))
      at(streamed_x, s).multiply(at(pw, s).view(), panel(h, s));  // one streaming pass
    else
      products.push_back({at(x, s), at(pw, s).view(), panel(h, s)});
  }

  // Aggregate-first: the bands of [A_r ... | x_t] and [W_r; ...; W_root,t], whose product is the
  // type's whole sum; in training only the selected rows of a type that has them.
  const auto selected = [&](int t) { return step.training && at(selection_, t).selected(); };
  for (int t = 0; t < types; ++t) {
    if (!computes(t)) continue;
    const std::int64_t rows = selected(t) ? at(selection_, t).rows().size : g.num_outputs(t);
    at(y, t) = Tensor::empty(rows, layout_.out_dim, device_);
    if (!aggregate(t)) continue;
    const graph::RelationStack& st = g.stack(t);
    const std::vector<std::int64_t>& bands = at(layout_.bands, t);
    at(a, t) = Tensor::empty(rows, bands.back(), device_);
    Tensor& stacked = at(w, t);
    stacked = Tensor::empty(bands.back(), layout_.out_dim, device_);
    for (int k = 0; k <= st.num_blocks(); ++k) {
      const TensorView band = at(a, t).view().slice_cols(at(bands, k), at(bands, k + 1));
      const TensorView weights = stacked.view().slice_rows(at(bands, k), at(bands, k + 1));
      if (k == st.num_blocks()) {
        if (selected(t))
          at(selection_, t).gather(at(x, t), band);
        else
          kernels::copy(at(x, t).slice_rows(0, g.num_outputs(t)), band);
        kernels::copy(at(roots_, t).value.view(), weights);
      } else {
        const int r = at(st.relations, k);
        (selected(t) ? at(selected_blocks_, r) : at(blocks_, r)).multiply(at(x, g.relation_src(r)), band);
        kernels::copy(weight_view(r), weights);
      }
    }
    products.push_back({at(a, t).view(), stacked.view(), at(y, t).view()});
  }
  kernels::segmented_gemm(products, Transpose::no, Transpose::no);

  for (int t = 0; t < types; ++t) {
    if (!computes(t)) continue;
    if (!aggregate(t) && selected(t)) {
      Tensor all = Tensor::empty(g.num_outputs(t), layout_.out_dim, device_);
      panels_.stack(t).multiply(h.view(), all.view());
      at(selection_, t).gather(all.view(), at(y, t).view());
    } else if (!aggregate(t)) {
      panels_.stack(t).multiply(h.view(), at(y, t).view());
    }
    if (layout_.bias) kernels::add_bias(at(y, t).view(), at(biases_, t).value.view());
  }
  if (step.training) {
    inputs_ = x;
    streamed_inputs_ = streamed_x;
    stacked_inputs_ = std::move(a);
    stacked_weights_ = std::move(w);
    panel_weights_ = std::move(pw);
    saved_ = true;
  }
  return y;
}

std::vector<Tensor> RgcnConv::backward(std::vector<Tensor> grad_y, const Step& /*step*/, const RowGradientSink& sink) {
  HALO_EXPECTS(saved_, "RgcnConv " + name_ + ": backward needs a training forward before it");
  const RgcnGraph& g = *graph_;
  const int types = g.num_vertex_types();
  const auto at = [](auto& v, int i) -> decltype(auto) { return v[static_cast<std::size_t>(i)]; };
  HALO_EXPECTS(static_cast<int>(grad_y.size()) == types, "RgcnConv " + name_ + ": expected one gradient per vertex " +
                                                             "type (" + std::to_string(types) + "), got " +
                                                             std::to_string(grad_y.size()));
  for (int t = 0; t < types; ++t) {
    if (!computes(t)) continue;
    const Tensor& gy = at(grad_y, t);
    HALO_EXPECTS(gy.rows() == training_rows(t) && gy.cols() == layout_.out_dim && gy.device() == device_,
                 "RgcnConv " + name_ + ": gradient of type " + g.vertex_type_name(t) + " is " +
                     std::to_string(gy.rows()) + " x " + std::to_string(gy.cols()) + " on " + gy.device().to_string() +
                     ", the output " + std::to_string(training_rows(t)) + " x " + std::to_string(layout_.out_dim) +
                     " on " + device_.to_string());
  }
  const auto selected = [&](int t) { return at(selection_, t).selected(); };
  saved_ = false;
  const std::vector<ConstTensorView> x = std::move(inputs_);
  const std::vector<InputMatrix> streamed_x = std::move(streamed_inputs_);
  std::vector<Tensor> a = std::move(stacked_inputs_);
  const std::vector<Tensor> w = std::move(stacked_weights_);
  const std::vector<Tensor> pw = std::move(panel_weights_);
  inputs_.clear();
  streamed_inputs_.clear();
  stacked_inputs_.clear();
  stacked_weights_.clear();
  panel_weights_.clear();

  for (int t = 0; t < types; ++t)
    if (computes(t) && layout_.bias) kernels::column_sums(at(grad_y, t).view(), at(biases_, t).grad.view(), true);
  // Transform-first: H's gradient, from the output gradients stacked in type order.
  Tensor grad_h;
  if (!panels_.empty()) {
    Tensor stacked = Tensor::empty(panels_.output_rows(), layout_.out_dim, device_);
    for (int t = 0; t < types; ++t) {
      if (!computes(t) || aggregate(t)) continue;
      const TensorView rows =
          stacked.view().slice_rows(panels_.output_row(t), panels_.output_row(t) + g.num_outputs(t));
      if (selected(t)) {  // the rows outside the selection had no part in the loss
        kernels::fill(rows, 0.0f);
        at(selection_, t).scatter_add(at(grad_y, t).view(), rows);
      } else {
        kernels::copy(at(grad_y, t).view(), rows);
      }
    }
    grad_h = Tensor::empty(panels_.rows(), layout_.out_dim, device_);
    panels_.transpose().multiply(stacked.view(), grad_h.view());
  }

  // Weight gradients. With bases, the W_r's gradients are gathered in one zeroed stack first.
  Tensor grad_composed;
  if (layout_.num_bases > 0) grad_composed = Tensor::zeros(composed_.rows(), composed_.cols(), device_);
  const auto grad_weight = [&](int r) -> TensorView {
    const int slot = at(layout_.slot, r);
    if (layout_.num_bases == 0) return at(weights_, slot).grad.view();
    const std::int64_t in = weight_view(r).rows;
    return grad_composed.view().slice_rows(slot * in, (slot + 1) * in);
  };
  // Panels: x_sᵀ · G_s into one fresh gradient per source type, added band by band below.
  std::vector<Tensor> grad_panel_weights(static_cast<std::size_t>(types));
  std::vector<GemmSegment> segments;
  for (int s = 0; s < types; ++s) {
    if (panels_.bands(s).empty()) continue;
    if (streamed(s)) {  // one streaming pass, adding up chunk by chunk
      at(grad_panel_weights, s) = Tensor::zeros(at(pw, s).rows(), at(pw, s).cols(), device_);
      at(streamed_x, s).add_transposed_products({{panel(grad_h, s), at(grad_panel_weights, s).view()}});
      continue;
    }
    at(grad_panel_weights, s) = Tensor::empty(at(pw, s).rows(), at(pw, s).cols(), device_);
    segments.push_back({at(x, s), panel(grad_h, s), at(grad_panel_weights, s).view()});
  }
  kernels::segmented_gemm(segments, Transpose::yes, Transpose::no);
  // Aggregate-first: the whole stack [A_r ... | x_t]ᵀ · G_t in one GEMM per type, into a fresh
  // gradient of the stacked weights, added band by band below: one product with every band's
  // rows instead of a thin one per band (out_dim rows each), which BLAS runs far less efficiently.
  std::vector<Tensor> grad_stacks(static_cast<std::size_t>(types));
  segments.clear();
  for (int t = 0; t < types; ++t) {
    if (!computes(t) || !aggregate(t)) continue;
    at(grad_stacks, t) = Tensor::empty(at(w, t).rows(), layout_.out_dim, device_);
    segments.push_back({at(a, t).view(), at(grad_y, t).view(), at(grad_stacks, t).view()});
  }
  kernels::segmented_gemm(segments, Transpose::yes, Transpose::no);
  for (int t = 0; t < types; ++t) {
    if (!computes(t) || !aggregate(t)) continue;
    const graph::RelationStack& st = g.stack(t);
    const std::vector<std::int64_t>& bands = at(layout_.bands, t);
    for (int k = 0; k <= st.num_blocks(); ++k) {
      const TensorView target = k == st.num_blocks() ? at(roots_, t).grad.view() : grad_weight(at(st.relations, k));
      kernels::axpby(1.0f, at(grad_stacks, t).view().slice_rows(at(bands, k), at(bands, k + 1)), 1.0f, target);
    }
  }
  for (int s = 0; s < types; ++s) {
    const std::vector<detail::RgcnPanels::Band>& bands = panels_.bands(s);
    for (std::size_t j = 0; j < bands.size(); ++j) {
      const TensorView target =
          bands[j].relation >= 0 ? grad_weight(bands[j].relation) : at(roots_, bands[j].root).grad.view();
      kernels::axpby(1.0f,
                     at(grad_panel_weights, s).view().slice_cols(static_cast<std::int64_t>(j) * layout_.out_dim,
                                                                 static_cast<std::int64_t>(j + 1) * layout_.out_dim),
                     1.0f, target);
    }
  }
  if (layout_.num_bases > 0) {
    const std::int64_t flat = bases_.value.numel() / layout_.num_bases;
    const auto count = static_cast<std::int64_t>(layout_.computed.size());
    const ConstTensorView v{bases_.value.data(), layout_.num_bases, flat, flat, device_};
    const TensorView grad_v{bases_.grad.data(), layout_.num_bases, flat, flat, device_};
    const ConstTensorView grad_w{grad_composed.data(), count, flat, flat, device_};
    kernels::gemm(comp_.value.view(), Transpose::yes, grad_w, Transpose::no, grad_v, 1.0f, 1.0f);
    kernels::gemm(grad_w, Transpose::no, v, Transpose::yes, comp_.grad.view(), 1.0f, 1.0f);
  }

  // Input gradients, one tensor per type: the panels' G_s · [W_a | W_b | ...]ᵀ in one segmented
  // GEMM (which writes the whole tensor; a type without a panel starts from zeros), then the
  // aggregate-first types' bands in relation order.
  std::vector<Tensor> grad_x(static_cast<std::size_t>(types));
  const auto wants = [&](int s) { return reads(s) && input_grad(s); };
  segments.clear();
  for (int s = 0; s < types; ++s) {
    if (!wants(s)) continue;
    if (streamed(s)) {
      stream_input_gradient(s, panel(grad_h, s), at(pw, s).view(), at(streamed_x, s).chunk_rows(), sink);
      continue;
    }
    Tensor& gx = at(grad_x, s);
    if (panels_.bands(s).empty()) {
      gx = Tensor::zeros(g.num_inputs(s), at(layout_.in_dims, s), device_);
      continue;
    }
    gx = Tensor::empty(g.num_inputs(s), at(layout_.in_dims, s), device_);
    segments.push_back({panel(grad_h, s), at(pw, s).view(), gx.view()});
  }
  kernels::segmented_gemm(segments, Transpose::no, Transpose::yes);
  // Aggregate-first types: the gradient of [A_r ... | x_t] in one GEMM each, into the saved
  // stack's memory, then its root band into x_t's gradient and each A_r band through M_rᵀ.
  std::vector<int> banded;
  segments.clear();
  for (int t = 0; t < types; ++t) {
    if (!computes(t) || !aggregate(t)) continue;
    bool needed = wants(t);
    for (int r : g.stack(t).relations) needed = needed || wants(g.relation_src(r));
    if (!needed) continue;
    banded.push_back(t);
    segments.push_back({at(grad_y, t).view(), at(w, t).view(), at(a, t).view()});
  }
  kernels::segmented_gemm(segments, Transpose::no, Transpose::yes);
  for (int t : banded) {
    const graph::RelationStack& st = g.stack(t);
    const std::vector<std::int64_t>& bands = at(layout_.bands, t);
    const TensorView root_band = at(a, t).view().slice_cols(bands[bands.size() - 2], bands.back());
    if (wants(t) && selected(t))
      at(selection_, t).scatter_add(root_band, at(grad_x, t).view());
    else if (wants(t))
      kernels::axpby(1.0f, root_band, 1.0f, at(grad_x, t).view().slice_rows(0, g.num_outputs(t)));
    for (int k = 0; k < st.num_blocks(); ++k) {
      const int r = at(st.relations, k);
      if (wants(g.relation_src(r)))
        at(block_transposes_, r)
            .multiply(at(a, t).view().slice_cols(at(bands, k), at(bands, k + 1)), at(grad_x, g.relation_src(r)).view(),
                      kernels::Accumulate::add);
    }
  }
  return grad_x;
}

void RgcnConv::stream_input_gradient(int s, ConstTensorView grad_panel, ConstTensorView panel_weights,
                                     std::int64_t chunk_rows, const RowGradientSink& sink) const {
  HALO_EXPECTS(static_cast<bool>(sink), "RgcnConv " + name_ + ": the input gradient of streamed type " +
                                            graph_->vertex_type_name(s) + " needs a sink for its row chunks");
  const std::int64_t rows = grad_panel.rows;
  const std::int64_t chunk = std::max<std::int64_t>(1, std::min(chunk_rows, rows));
  Tensor buffer = Tensor::empty(chunk, layout_.in_dims[static_cast<std::size_t>(s)], device_);
  for (std::int64_t first = 0; first < rows; first += chunk) {
    const std::int64_t n = std::min(chunk, rows - first);
    const TensorView out = buffer.view().slice_rows(0, n);
    kernels::gemm(grad_panel.slice_rows(first, first + n), Transpose::no, panel_weights, Transpose::yes, out);
    sink(s, out, first);
  }
}

std::vector<Parameter*> RgcnConv::parameters() {
  std::vector<Parameter*> out;
  if (layout_.num_bases == 0) {
    for (Parameter& p : weights_) out.push_back(&p);
  } else {
    out.push_back(&bases_);
    out.push_back(&comp_);
  }
  for (int t = 0; t < graph_->num_vertex_types(); ++t)
    if (computes(t)) out.push_back(&roots_[static_cast<std::size_t>(t)]);
  if (layout_.bias)
    for (int t = 0; t < graph_->num_vertex_types(); ++t)
      if (computes(t)) out.push_back(&biases_[static_cast<std::size_t>(t)]);
  return out;
}

void RgcnConv::initialize(std::uint64_t seed, std::uint64_t first_stream, float weight_decay) {
  std::uint64_t stream = first_stream;
  for (Parameter* p : parameters()) {
    bool is_bias = false;
    for (const Parameter& b : biases_) is_bias = is_bias || p == &b;
    if (!is_bias) {
      glorot_uniform(p->value, seed, stream);
      p->weight_decay = weight_decay;
    }
    ++stream;
  }
}

void RgcnConv::set_input_grad(int type, bool needed) {
  HALO_EXPECTS(type >= 0 && type < graph_->num_vertex_types(), "RgcnConv " + name_ + ": no vertex type " +
                                                                   std::to_string(type) + " (there are " +
                                                                   std::to_string(graph_->num_vertex_types()) + ")");
  input_grad_[static_cast<std::size_t>(type)] = needed ? 1 : 0;
}

Parameter* RgcnConv::relation_weight(int r) {
  HALO_EXPECTS(r >= 0 && r < graph_->num_relations(), "RgcnConv " + name_ + ": no relation " + std::to_string(r));
  const int slot = layout_.slot[static_cast<std::size_t>(r)];
  return layout_.num_bases == 0 && slot >= 0 ? &weights_[static_cast<std::size_t>(slot)] : nullptr;
}

Parameter& RgcnConv::root(int t) {
  check_output(t);
  return roots_[static_cast<std::size_t>(t)];
}

Parameter* RgcnConv::bias(int t) {
  check_output(t);
  return layout_.bias ? &biases_[static_cast<std::size_t>(t)] : nullptr;
}

std::int64_t RgcnConv::saved_bytes() const { return layout_.saved_bytes(*graph_); }

std::int64_t RgcnConv::graph_bytes() const {
  std::int64_t bytes = panels_.bytes();
  // The blocks of the relations into aggregate-first types, the only ones built.
  for (int r = 0; r < graph_->num_relations(); ++r) {
    const int t = graph_->relation_dst(r);
    if (!computes(t) || !aggregate(t)) continue;
    const auto rs = static_cast<std::size_t>(r);
    bytes += blocks_[rs].bytes() + block_transposes_[rs].bytes();
    if (selection_[static_cast<std::size_t>(t)].selected()) bytes += selected_blocks_[rs].bytes();
  }
  return bytes;
}

std::int64_t RgcnConv::backward_bytes(std::int64_t input_grad_bytes) const {
  return layout_.backward_bytes(*graph_, input_grad_bytes);
}

}  // namespace halo::train
