// TypedLinear: a dense layer per vertex type over its output rows, with training rows.
#include "train/layers/typed_linear.hpp"

#include <utility>

#include "graph/base/error.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "train/layers/init.hpp"

namespace halo::train {

using kernels::ConstTensorView;
using kernels::Tensor;
using kernels::Transpose;

TypedLinearLayout::TypedLinearLayout(const RgcnGraph& graph, std::vector<std::int64_t> input_widths,
                                     std::int64_t output_width, const std::vector<int>& outputs, bool with_bias,
                                     const std::string& name)
    : in_dims(std::move(input_widths)), out_dim(output_width), bias(with_bias) {
  const int types = graph.num_vertex_types();
  HALO_EXPECTS(static_cast<int>(in_dims.size()) == types,
               "TypedLinear " + name + ": needs one input width per vertex type (" + std::to_string(types) + "), got " +
                   std::to_string(in_dims.size()));
  HALO_EXPECTS(out_dim > 0, "TypedLinear " + name + ": output width must be positive, got " + std::to_string(out_dim));
  computes.assign(static_cast<std::size_t>(types), outputs.empty() ? 1 : 0);
  for (int t : outputs) {
    HALO_EXPECTS(t >= 0 && t < types, "TypedLinear " + name + ": output type " + std::to_string(t) + " out of range");
    computes[static_cast<std::size_t>(t)] = 1;
  }
  for (int t = 0; t < types; ++t)
    HALO_EXPECTS(computes[static_cast<std::size_t>(t)] == 0 || in_dims[static_cast<std::size_t>(t)] > 0,
                 "TypedLinear " + name + ": type " + graph.vertex_type_name(t) + " is computed but has input width " +
                     std::to_string(in_dims[static_cast<std::size_t>(t)]));
}

std::int64_t TypedLinearLayout::parameter_bytes() const {
  std::int64_t floats = 0;
  for (std::size_t t = 0; t < computes.size(); ++t)
    if (computes[t] != 0) floats += (in_dims[t] + (bias ? 1 : 0)) * out_dim;
  return floats * static_cast<std::int64_t>(sizeof(float));
}

TypedLinear::TypedLinear(const RgcnGraph& graph, TypedLinearLayout layout, const std::string& name,
                         kernels::Device device)
    : graph_(&graph), name_(name), device_(device), layout_(std::move(layout)) {
  const auto types = static_cast<std::size_t>(graph.num_vertex_types());
  weights_.resize(types);
  biases_.resize(types);
  selection_.resize(types);
  input_grad_.assign(types, 1);
  for (int t = 0; t < graph.num_vertex_types(); ++t) {
    if (!computes(t)) continue;
    const auto ts = static_cast<std::size_t>(t);
    const std::string prefix = name + "." + graph.vertex_type_name(t);
    weights_[ts] = make_parameter(prefix + ".weight", layout_.in_dims[ts], layout_.out_dim, device);
    if (layout_.bias) biases_[ts] = make_parameter(prefix + ".bias", 1, layout_.out_dim, device);
  }
}

void TypedLinear::check_output(int type) const {
  HALO_EXPECTS(type >= 0 && type < graph_->num_vertex_types() && computes(type),
               "TypedLinear " + name_ + ": type " + std::to_string(type) + " is not one of its outputs");
}

void TypedLinear::set_training_rows(int type, kernels::IndexView rows) {
  check_output(type);
  selection_[static_cast<std::size_t>(type)] =
      TrainingRows(rows, graph_->num_outputs(type), device_, "TypedLinear " + name_, graph_->vertex_type_name(type));
  pending_ = false;
}

std::int64_t TypedLinear::training_rows(int type) const {
  check_output(type);
  return selection_[static_cast<std::size_t>(type)].count(graph_->num_outputs(type));
}

std::vector<Tensor> TypedLinear::forward(const std::vector<ConstTensorView>& x, const Step& step,
                                         const std::vector<InputMatrix>& streamed_x) {
  const int types = graph_->num_vertex_types();
  HALO_EXPECTS(static_cast<int>(x.size()) == types, "TypedLinear " + name_ + ": needs one input per vertex type (" +
                                                        std::to_string(types) + "), got " + std::to_string(x.size()));
  HALO_EXPECTS(streamed_x.empty() || static_cast<int>(streamed_x.size()) == types,
               "TypedLinear " + name_ + ": needs no chunk-read inputs or one (possibly empty) per vertex type (" +
                   std::to_string(types) + "), got " + std::to_string(streamed_x.size()));
  pending_ = false;
  selected_inputs_.clear();
  selected_inputs_.resize(static_cast<std::size_t>(types));
  std::vector<InputMatrix> in(static_cast<std::size_t>(types));
  std::vector<Tensor> y(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    const auto ts = static_cast<std::size_t>(t);
    const bool chunked = !streamed_x.empty() && !streamed_x[ts].empty();
    if (chunked && !reads_by_products(t))
      throw UnsupportedError("TypedLinear " + name_ + ": reads " + graph_->vertex_type_name(t) +
                             " whole (it is not computed, or has training rows to pick)");
    if (!computes(t)) continue;
    in[ts] = chunked ? streamed_x[ts] : InputMatrix(x[ts]);
    HALO_EXPECTS(in[ts].rows() >= graph_->num_outputs(t) && in[ts].cols() == layout_.in_dims[ts],
                 "TypedLinear " + name_ + ": input of " + graph_->vertex_type_name(t) + " is " +
                     std::to_string(in[ts].rows()) + " x " + std::to_string(in[ts].cols()) + ", expected at least " +
                     std::to_string(graph_->num_outputs(t)) + " x " + std::to_string(layout_.in_dims[ts]));
    const InputMatrix owned = in[ts].first_rows(graph_->num_outputs(t));
    if (step.training && selection_[ts].selected()) {
      selected_inputs_[ts] = selection_[ts].gather(x[ts].slice_rows(0, graph_->num_outputs(t)));
      y[ts] = InputMatrix(selected_inputs_[ts]).multiply(weights_[ts].value.view());
    } else {
      y[ts] = owned.multiply(weights_[ts].value.view());
    }
    if (layout_.bias) kernels::add_bias(y[ts].view(), biases_[ts].value.view());
  }
  if (step.training) {
    inputs_ = std::move(in);
    pending_ = true;
  } else {
    selected_inputs_.clear();
  }
  return y;
}

std::vector<Tensor> TypedLinear::backward(std::vector<Tensor> grad_y, const Step& /*step*/,
                                          const RowGradientSink& /*sink*/) {
  HALO_EXPECTS(pending_, "TypedLinear " + name_ + ": backward needs a training forward before it");
  pending_ = false;
  const int types = graph_->num_vertex_types();
  std::vector<Tensor> grad_x(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    if (!computes(t)) continue;
    const auto ts = static_cast<std::size_t>(t);
    const Tensor& g = grad_y.at(ts);
    HALO_EXPECTS(g.rows() == training_rows(t) && g.cols() == layout_.out_dim,
                 "TypedLinear " + name_ + ": gradient of " + graph_->vertex_type_name(t) + " is " +
                     std::to_string(g.rows()) + " x " + std::to_string(g.cols()) + ", expected " +
                     std::to_string(training_rows(t)) + " x " + std::to_string(layout_.out_dim));
    const bool selected = selection_[ts].selected();
    const InputMatrix in =
        selected ? InputMatrix(selected_inputs_[ts]) : inputs_[ts].first_rows(graph_->num_outputs(t));
    in.add_transposed_products({{g.view(), weights_[ts].grad.view()}});
    if (layout_.bias) kernels::column_sums(g.view(), biases_[ts].grad.view(), true);
    if (!input_grad(t)) continue;
    grad_x[ts] = Tensor::zeros(inputs_[ts].rows(), layout_.in_dims[ts], device_);
    Tensor dx = Tensor::empty(g.rows(), layout_.in_dims[ts], device_);
    kernels::gemm(g.view(), Transpose::no, weights_[ts].value.view(), Transpose::yes, dx.view());
    if (selected)
      selection_[ts].scatter_add(dx.view(), grad_x[ts].view());
    else
      kernels::copy(dx.view(), grad_x[ts].view().slice_rows(0, dx.rows()));
  }
  inputs_.clear();
  selected_inputs_.clear();
  return grad_x;
}

std::vector<Parameter*> TypedLinear::parameters() {
  std::vector<Parameter*> all;
  for (int t = 0; t < graph_->num_vertex_types(); ++t) {
    if (!computes(t)) continue;
    all.push_back(&weights_[static_cast<std::size_t>(t)]);
    if (layout_.bias) all.push_back(&biases_[static_cast<std::size_t>(t)]);
  }
  return all;
}

void TypedLinear::initialize(std::uint64_t seed, std::uint64_t first_stream, float weight_decay) {
  std::uint64_t stream = first_stream;
  for (int t = 0; t < graph_->num_vertex_types(); ++t) {
    if (!computes(t)) continue;
    Parameter& w = weights_[static_cast<std::size_t>(t)];
    glorot_uniform(w.value, seed, stream++);
    w.weight_decay = weight_decay;
    if (layout_.bias) ++stream;
  }
}

}  // namespace halo::train
