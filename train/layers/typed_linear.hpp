// TypedLinear: one dense layer per vertex type, y_t = x_t · W_t + b_t on the type's output rows.
// HGT's input and output projections (PyG's HGT example: a Linear per vertex type before the
// first HGTConv, one on the labelled type's representation after the last), as a HeteroLayer so
// that a heterogeneous model stacks it with the graph layers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/hetero_layer.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/rgcn_graph.hpp"
#include "train/layers/step.hpp"
#include "train/layers/training_rows.hpp"

namespace halo::train {

// What a TypedLinear computes: its output types (which are also the types it reads) and widths.
struct TypedLinearLayout {
  TypedLinearLayout() = default;
  // outputs: the types it computes (empty: every type). InvalidArgument naming `name` for a type
  // out of range, a computed type of input width <= 0 or out_dim <= 0.
  TypedLinearLayout(const RgcnGraph& graph, std::vector<std::int64_t> in_dims, std::int64_t out_dim,
                    const std::vector<int>& outputs, bool bias, const std::string& name);

  std::vector<std::int64_t> in_dims;  // per type
  std::int64_t out_dim = 0;
  bool bias = true;
  std::vector<char> computes;  // per type; a type is read exactly when it is computed

  std::int64_t parameter_bytes() const;
};

class TypedLinear : public HeteroLayer {
 public:
  // Parameters "<name>.<type>.weight" (in_t x out_dim) and, with bias, "<name>.<type>.bias"
  // (1 x out_dim) per computed type, zero on `device`. `graph` (its type names and row counts)
  // must outlive the layer.
  TypedLinear(const RgcnGraph& graph, TypedLinearLayout layout, const std::string& name,
              kernels::Device device = kernels::Device::cpu());

  // One GEMM per computed type over its output rows (the first rows of x[t]; a type with training
  // rows multiplies only those in training) and the bias. Keeps the views of x in training. A
  // type without training rows is read only through that product and its transpose in backward
  // (reads_by_products), so it may come as streamed_x[t] (a dropout applied as its chunks are
  // read); training keeps that handle.
  std::vector<kernels::Tensor> forward(const std::vector<kernels::ConstTensorView>& x, const Step& step,
                                       const std::vector<InputMatrix>& streamed_x = {}) override;
  // dW_t += x_tᵀ · g_t, db_t += Σ rows of g_t, and dx_t = g_t · W_tᵀ in x_t's rows (zero in its
  // halo rows and in the rows training did not select) when its input gradient is on.
  std::vector<kernels::Tensor> backward(std::vector<kernels::Tensor> grad_y, const Step& step,
                                        const RowGradientSink& sink = {}) override;

  // Per computed type in type order: weight, then bias.
  std::vector<Parameter*> parameters() override;
  // Glorot-uniform weights with `weight_decay`; zero, undecayed biases.
  void initialize(std::uint64_t seed, std::uint64_t first_stream, float weight_decay) override;

  void set_input_grad(int type, bool needed) override {
    input_grad_.at(static_cast<std::size_t>(type)) = needed ? 1 : 0;
  }
  bool input_grad(int type) const override { return input_grad_.at(static_cast<std::size_t>(type)) != 0; }
  bool computes(int type) const override { return layout_.computes.at(static_cast<std::size_t>(type)) != 0; }
  bool reads(int type) const override { return computes(type); }
  bool reads_by_products(int type) const override {
    return computes(type) && !selection_.at(static_cast<std::size_t>(type)).selected();
  }
  void set_training_rows(int type, kernels::IndexView rows) override;
  std::int64_t training_rows(int type) const override;

 private:
  void check_output(int type) const;

  const RgcnGraph* graph_;
  std::string name_;
  kernels::Device device_;
  TypedLinearLayout layout_;
  std::vector<Parameter> weights_, biases_;  // per type (empty for types not computed)
  std::vector<char> input_grad_;
  std::vector<TrainingRows> selection_;           // per type
  std::vector<InputMatrix> inputs_;               // per type, kept by a training forward
  std::vector<kernels::Tensor> selected_inputs_;  // per type with training rows: its selected rows of x
  bool pending_ = false;
};

}  // namespace halo::train
