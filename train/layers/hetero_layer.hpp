// HeteroLayer: what a heterogeneous model (train/models/hetero_model.hpp) asks of each of its
// layers. A layer maps one input per vertex type of an RgcnGraph to one output per type it
// computes; R-GCN's RgcnConv, HGT's HgtConv and the per-type TypedLinear implement it, so one
// model runs their stacks with the same tables, dropout, halo exchanges and training rows.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/tensor.hpp"
#include "train/layers/layer_input.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/step.hpp"

namespace halo::train {

class HeteroLayer {
 public:
  // Receives a streamed input's gradient in row chunks: rows is d loss / d x[type] for rows
  // [first_row, first_row + rows.rows), valid during the call (the sink may work on it in place).
  using RowGradientSink = std::function<void(int type, kernels::TensorView rows, std::int64_t first_row)>;

  virtual ~HeteroLayer() = default;

  // y[t] (outputs of t x out width) for inputs x[t] (inputs of t, halo rows after the owned
  // ones), an empty tensor for a type the layer does not compute; x[t] of a type it does not read
  // may be an empty view. streamed_x: per type an input read in row chunks instead of x[t] (a
  // FeaturePipeline's rows, or a resident matrix with a transform such as a dropout), or empty
  // (all of it, or the entry of a type given as x[t]); a layer takes it only for the types
  // reads_by_products names and refuses it for the others (UnsupportedError).
  // A training forward keeps what backward needs (views of x and handles of streamed_x included:
  // the caller keeps what they point at alive and unchanged until backward).
  virtual std::vector<kernels::Tensor> forward(const std::vector<kernels::ConstTensorView>& x, const Step& step,
                                               const std::vector<InputMatrix>& streamed_x = {}) = 0;
  // From grad_y[t] of the last training forward (ignored for types it does not compute): adds
  // d loss / d θ to every parameter's grad and returns d loss / d x[t] for every read type whose
  // input gradient is on (an empty tensor for the others; a streamed type's goes to sink).
  virtual std::vector<kernels::Tensor> backward(std::vector<kernels::Tensor> grad_y, const Step& step,
                                                const RowGradientSink& sink = {}) = 0;

  // The dense parameters, in a fixed order.
  virtual std::vector<Parameter*> parameters() = 0;
  // Draws every parameter's initial value and sets its weight decay: parameter k of parameters()
  // draws from the stream (seed, first_stream + k), so a model's initialisation depends on its
  // seed alone; `weight_decay` goes to the weight matrices (not to biases, gates or priors).
  virtual void initialize(std::uint64_t seed, std::uint64_t first_stream, float weight_decay) = 0;

  // Whether backward returns d loss / d x[t] (on for every type by default).
  virtual void set_input_grad(int type, bool needed) = 0;
  virtual bool input_grad(int type) const = 0;
  // Whether the layer computes y[t]; whether some computed term reads x[t].
  virtual bool computes(int type) const = 0;
  virtual bool reads(int type) const = 0;
  // Whether the layer reads x[t] only through products with its weights (x[t] · W forward,
  // x[t]ᵀ · g for the weights' gradients), so that it takes x[t] as streamed_x[t], read chunk by
  // chunk: a transform on it (a dropout) is then applied as each chunk is read, and the
  // transformed matrix is never stored. None by default.
  virtual bool reads_by_products(int /*type*/) const { return false; }

  // From now on a training forward returns only the output rows `rows` of type `type` (row k:
  // output row rows[k]) and backward takes their gradient only; an evaluation forward still
  // returns every row. InvalidArgument for a type the layer does not compute, a row out of range
  // or listed twice.
  virtual void set_training_rows(int type, kernels::IndexView rows) = 0;
  // The rows a training forward returns of a computed type.
  virtual std::int64_t training_rows(int type) const = 0;

  // The global id of every input row, per type (the model's numbering, the same on every rank),
  // for a layer whose randomness is keyed on vertices (attention dropout); the views must outlive
  // the layer. The others need none: the default does nothing.
  virtual void set_vertex_ids(const std::vector<kernels::IndexView>& /*ids*/) {}
};

}  // namespace halo::train
