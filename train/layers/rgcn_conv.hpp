// RgcnConv: Schlichtkrull et al.'s relational graph convolution on a heterogeneous graph, as the
// OGB R-GCN example for ogbn-mag computes it. For every vertex type t and vertex i of type t:
//   y_i = x_i · W_root,t + b_t + Σ_r Σ_{j ∈ N_r(i)} x_j · W_r / c_{i,r},   c_{i,r} = |N_r(i)|,
// r over the relations that end at t, optionally with W_r = Σ_b a_rb · V_b (basis decomposition).
// RgcnGraph (train/layers/rgcn_graph.hpp) holds the graph side, built once per graph; RgcnConvOptions
// say which types a layer computes and in which order it multiplies and sums.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/csr.hpp"
#include "graph/hetero_graph.hpp"
#include "graph/relation_stack.hpp"
#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/detail/rgcn_panels.hpp"
#include "train/layers/hetero_layer.hpp"
#include "train/layers/layer_input.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/rgcn_graph.hpp"
#include "train/layers/step.hpp"
#include "train/layers/training_rows.hpp"

namespace halo::train {

// The two ways to compute a destination type's relation sum Σ_r M_r · x_src(r) · W_r (M_r the
// mean matrix of relation r). Both give the same result up to rounding; they differ in work.
enum class RgcnOrder {
  // Per type, the cheaper of the two by RgcnConv::order_cost.
  automatic,
  // x_src(r) · W_r for every relation and x_t · W_root,t (one wide GEMM per source type over all
  // the weights that read it: train/layers/detail/rgcn_panels.hpp), then one SpMM of the type's relation
  // stack: the aggregation of every relation and the root term in one pass. Cheap when out_dim is
  // narrow or the type has more vertices than its relations have sources.
  transform_first,
  // A_r = M_r · x_src(r) per relation (input width, one SpMM of the stack's block each), side by
  // side with x_t in one matrix, times the weights stacked [W_r; ...; W_root,t]: one GEMM with
  // a long inner dimension, which BLAS runs near its peak. Cheap when the output is wider than
  // the input (a classifier layer) or the type has few vertices; backward needs the stack kept.
  aggregate_first,
};

struct RgcnConvOptions {
  // The vertex types whose outputs the layer computes, in any order; empty: every type. A
  // relation into a type outside the list has no weight and is not computed, a type outside it
  // has no root and no bias, and an input no computed term reads is not looked at. A model's
  // last layer needs only the labelled type, the one before only that type and its sources.
  std::vector<int> outputs;
  RgcnOrder order = RgcnOrder::automatic;
  // The types whose input is streamed in row chunks (an InputMatrix over a FeaturePipeline: an
  // embedding table larger than the device) instead of resident. Every output type that reads
  // one, through a relation or as its root, is computed transform first whatever `order` says,
  // so that x_s enters only row-wise products: x_s · [W_a | W_b | ...] forward, x_sᵀ · G_s and
  // G_s · [W_a | W_b | ...]ᵀ backward, each one streaming pass or one pass of row chunks.
  std::vector<int> streamed;
};

// What an RgcnConv computes and keeps, decided from the graph's counts and the widths alone:
// the output and read types, the computed relations, each output type's order, the bands of the
// aggregate-first stacks and the panels' layout. RgcnConv builds exactly this; the memory plan
// reads its byte counts before any parameter or matrix exists. O(types + relations).
struct RgcnConvLayout {
  RgcnConvLayout() = default;
  // Checks the arguments as RgcnConv's constructor documents (InvalidArgument naming `name`).
  RgcnConvLayout(const RgcnGraph& graph, std::vector<std::int64_t> in_dims, std::int64_t out_dim, int num_bases,
                 bool bias, const RgcnConvOptions& options, const std::string& name);

  std::vector<std::int64_t> in_dims;  // per type
  std::int64_t out_dim = 0;
  int num_bases = 0;
  bool bias = false;
  std::vector<char> computes;                   // per type
  std::vector<char> reads;                      // per type
  std::vector<char> streamed;                   // per type: options.streamed
  std::vector<char> aggregate;                  // per output type: aggregate-first
  std::vector<int> computed;                    // the computed relations, in relation order
  std::vector<int> slot;                        // per relation: its position in `computed`, or -1
  // Per aggregate-first type: the column offsets of its bands in [A_r ... | x_t], one per
  // relation of its stack, then the root's, then the total width.
  std::vector<std::vector<std::int64_t>> bands;
  detail::RgcnPanelLayout panels;

  // The parameters' values (their gradients take as much again).
  std::int64_t parameter_bytes(const RgcnGraph& graph) const;
  // RgcnConv::saved_bytes, backward_bytes and graph_bytes (in host memory's sizes) of a layer
  // with this layout. saved_bytes with `selected_rows` >= 0: after set_training_rows(selected_type,
  // rows of that count), when an aggregate-first stack of that type keeps those rows only.
  // graph_bytes with `selected_type` >= 0: after set_training_rows(selected_type, selected_rows),
  // when an aggregate-first type keeps its selected rows' blocks and their transposes in place of
  // its blocks' transposes (O(those rows' entries · log relations); InvalidArgument for a row
  // outside the type's); before it with -1 (O(types + relations)).
  std::int64_t saved_bytes(const RgcnGraph& graph, int selected_type = -1, std::int64_t selected_rows = -1) const;
  std::int64_t backward_bytes(const RgcnGraph& graph, std::int64_t input_grad_bytes) const;
  std::int64_t graph_bytes(const RgcnGraph& graph, int selected_type = -1, kernels::IndexView selected_rows = {}) const;
  // The width of the bases' shared input, read by every computed relation (num_bases > 0).
  std::int64_t basis_input(const RgcnGraph& graph) const;
};

class RgcnConv : public HeteroLayer {
 public:
  // in_dims: the input width of every vertex type (in the graph's type order), out_dim the
  // output width of all of them. Parameters, all zero on `device`, for the computed relations
  // (those into an output type) and the output types only:
  //  - num_bases = 0: "<name>.weight.<relation key>" (in_dims[src] x out_dim) per relation;
  //  - num_bases = B > 0: "<name>.bases" ((B · in) x out_dim: V_0, ..., V_{B-1}, each in x
  //    out_dim, stacked, the memory layout of PyG's B x in x out weight) and "<name>.comp"
  //    (computed relations x B, the a_rb, rows in relation order); every computed relation must
  //    read the same input width `in`;
  //  - "<name>.root.<type>" (in_dims[t] x out_dim) per output type, and with bias
  //    "<name>.bias.<type>" (1 x out_dim) per output type.
  // For every output type the order of its relation sum is fixed here (options.order, or the
  // cheaper one by order_cost when automatic); aggregate-first types copy their relations'
  // blocks out of the stack (graph::stack_block) with their transposes. Every sparse matrix the
  // layer multiplies by (those blocks, the panels' renumbered stacks and their transpose) is kept
  // on `device`: on a GPU uploaded here once, as kernels::cuda::DeviceCsr, so that forward and
  // backward run every product there. `graph` must outlive the layer.
  RgcnConv(const RgcnGraph& graph, std::vector<std::int64_t> in_dims, std::int64_t out_dim, int num_bases, bool bias,
           const std::string& name, kernels::Device device = kernels::Device::cpu(),
           const RgcnConvOptions& options = {});
  // The layer of `layout`, as the constructor above builds it from the layout's arguments.
  RgcnConv(const RgcnGraph& graph, RgcnConvLayout layout, const std::string& name,
           kernels::Device device = kernels::Device::cpu());

  // y[t] (outputs of t x out_dim) for inputs x[t] (inputs of t x in_dims[t]), one per type,
  // all on the parameters' device; y[t] is an empty tensor for a type that is not an output, and
  // x[t] of a type no computed term reads may be anything (an empty view). One GEMM for the W_r
  // with bases (composing them), one SpMM per aggregate-first relation (into its band of the
  // type's stack [A_r ... | x_t]), one segmented GEMM for every source type's panel and every
  // aggregate-first type's stack times its stacked weights, one SpMM per transform-first type
  // over its renumbered stack (out_dim columns), the biases. In training the layer keeps the
  // views x (the caller keeps them alive and unchanged until backward), the aggregate-first
  // stacks and the stacked weights. Deterministic for a fixed thread count (on a GPU, when the
  // SpMM there is: kernels/cuda/spmm.cu); no value comes back to the host.
  //
  // A streamed type t (options.streamed) takes its input from streamed_x[t] instead (x[t] is then
  // ignored; streamed_x holds an empty InputMatrix for every other type, or is empty when no type
  // streams): its panel is one streaming pass, and a training forward keeps the handle (the
  // caller keeps its pipeline alive, and the source unchanged, until backward).
  std::vector<kernels::Tensor> forward(const std::vector<kernels::ConstTensorView>& x, const Step& step,
                                       const std::vector<InputMatrix>& streamed_x = {}) override;

  // From grad_y[t] = d loss / d y[t] of the last training forward (one per type; those of types
  // that are not outputs are ignored and may be empty): adds d loss / d θ to every parameter's
  // grad and returns d loss / d x[t] for every read type whose input gradient is on (an empty
  // tensor for the others). One SpMM with the transposed panel stacks (the panels' gradients
  // G_s), one segmented GEMM for the panels' weight gradients x_sᵀ · G_s and one for the
  // aggregate-first ones A_rᵀ · grad_y[t] (and the roots'), one for the input gradients
  // G_s · [W_a | W_b | ...]ᵀ, one for the aggregate-first stacks' gradients
  // grad_y[t] · [W_r; ...]ᵀ (written over the saved stacks) and an SpMM with each M_rᵀ, with
  // bases two more GEMMs (dV += aᵀ · dW, da += dW · Vᵀ).
  //
  // A streamed type's weight gradients take one streaming pass over its input, and its input
  // gradient (when on) is not returned (an empty tensor) but handed to sink(type, rows,
  // first_row) in row chunks of its pipeline's chunk size, in row order: rows is d loss / d x[t]
  // for rows [first_row, first_row + rows.rows), on the layer's device, valid during the call
  // (the sink may work on it in place).
  std::vector<kernels::Tensor> backward(std::vector<kernels::Tensor> grad_y, const Step& step,
                                        const RowGradientSink& sink = {}) override;

  // From now on a training forward computes only the output rows `rows` of type `type` (its
  // y[type] has rows.size rows, row k being output row rows[k]) and the backward after it takes
  // their gradient only; an evaluation forward still computes every row. For a model's last
  // layer, whose training loss reads the training vertices' logits alone. An aggregate-first type
  // multiplies only those rows (row-selected copies of its blocks on the layer's device, whose
  // transposes then replace the whole blocks' for backward); a transform-first type computes
  // every row and keeps the selected ones. `rows` is copied; InvalidArgument for a type that is
  // not an output, a row outside its outputs or a row listed twice. O(rows + their entries).
  void set_training_rows(int type, kernels::IndexView rows) override;
  // The output rows a training forward computes of an output type.
  std::int64_t training_rows(int type) const override;

  // Relation weights (computed relations in relation order) or bases and comp, then roots, then
  // biases (output types in type order).
  std::vector<Parameter*> parameters() override;
  // Glorot-uniform for every weight (relation weights or bases and comp, roots) with
  // `weight_decay`; the biases stay zero, undecayed.
  void initialize(std::uint64_t seed, std::uint64_t first_stream, float weight_decay) override;

  // Whether backward returns d loss / d x[t]; on for every type by default. Switch it off for a
  // type whose input is fixed features; keep it on for a type whose input is an embedding table.
  void set_input_grad(int type, bool needed) override;
  bool input_grad(int type) const override { return input_grad_.at(static_cast<std::size_t>(type)) != 0; }
  // Whether type t's input is streamed (options.streamed).
  bool streamed(int type) const { return layout_.streamed.at(static_cast<std::size_t>(type)) != 0; }
  // Whether the layer computes y[t]; whether some computed term reads x[t].
  bool computes(int type) const override { return layout_.computes.at(static_cast<std::size_t>(type)) != 0; }
  bool reads(int type) const override { return layout_.reads.at(static_cast<std::size_t>(type)) != 0; }
  // The order fixed for an output type.
  RgcnOrder order(int type) const;

  // The work of one forward pass of type t's relation sum in each order, in GEMM multiply-adds:
  // transform-first Σ_r rows(r) · in_r · out + s · nnz_t · out, aggregate-first
  // Σ_r n_t · in_r · out + s · nnz_r · in_r, with s = spmm_cost_ratio, what one SpMM multiply-add
  // (a gathered, cache-missing row element) costs in GEMM multiply-adds. Backward scales both
  // the same way. O(relations).
  static constexpr double spmm_cost_ratio = 8.0;
  static double order_cost(const RgcnGraph& graph, const std::vector<std::int64_t>& in_dims, std::int64_t out_dim,
                           int type, RgcnOrder order);

  // What the layer computes and keeps (its constructor's decisions).
  const RgcnConvLayout& layout() const { return layout_; }
  int num_bases() const { return layout_.num_bases; }
  // Relation r's own weight (nullptr with bases or when r is not computed), the bases and comp
  // (nullptr without).
  Parameter* relation_weight(int r);
  Parameter* bases() { return layout_.num_bases > 0 ? &bases_ : nullptr; }
  Parameter* comp() { return layout_.num_bases > 0 ? &comp_ : nullptr; }
  // The root and bias of an output type (InvalidArgument for another type; bias nullptr without).
  Parameter& root(int t);
  Parameter* bias(int t);

  // Bytes the layer holds from forward to backward: the composed W_r with bases, the
  // aggregate-first stacks [A_r ... | x_t] and stacked weights, and the panels' weights (views
  // of the inputs are the caller's).
  std::int64_t saved_bytes() const;
  // Bytes of the most a forward or backward holds besides its outputs (or their gradients) and
  // what saved_bytes counts, as backward allocates them: first H's gradient beside the stacked
  // output gradients it comes from (forward's H is as large), then H's gradient, the weight
  // gradients (the panels', the aggregate-first stacks' and, with bases, the composed weights')
  // and the input gradients, `input_grad_bytes`, together.
  std::int64_t backward_bytes(std::int64_t input_grad_bytes) const;
  // Bytes of the sparse matrices the layer keeps on its device (blocks, stacks, transposes).
  std::int64_t graph_bytes() const;

 private:
  kernels::ConstTensorView weight_view(int r) const;
  kernels::ConstTensorView band_weight(const detail::RgcnPanels::Band& band) const;
  // Source type s's panel of H (or of its gradient): its input rows x (bands · out_dim).
  kernels::TensorView panel(kernels::Tensor& h, int s) const;
  bool aggregate(int t) const { return layout_.aggregate[static_cast<std::size_t>(t)] != 0; }
  void check_output(int type) const;
  void check_inputs(const std::vector<kernels::ConstTensorView>& x, const std::vector<InputMatrix>& streamed_x) const;
  void compose_weights();
  // Streamed type s's input gradient G_s · [W_a | W_b | ...]ᵀ, row chunk by row chunk into sink.
  void stream_input_gradient(int s, kernels::ConstTensorView grad_panel, kernels::ConstTensorView panel_weights,
                             std::int64_t chunk_rows, const RowGradientSink& sink) const;

  const RgcnGraph* graph_;
  std::string name_;
  kernels::Device device_;
  RgcnConvLayout layout_;
  std::vector<Parameter> weights_;      // per computed relation, without bases
  Parameter bases_;
  Parameter comp_;
  kernels::Tensor composed_;            // with bases: the computed W_r stacked, (computed · in) x out_dim
  std::vector<Parameter> roots_;        // per type; empty for a type that is not an output
  std::vector<Parameter> biases_;       // per type; empty without bias or for a type that is not an output
  detail::RgcnPanels panels_;                       // the transform-first layout
  std::vector<CsrOperator> blocks_;             // per relation into an aggregate-first type: M_r
  std::vector<CsrOperator> block_transposes_;   // and M_rᵀ (of the training rows' M_r when a type has them)
  std::vector<TrainingRows> selection_;         // per type: the rows set_training_rows gave, if it was called
  std::vector<CsrOperator> selected_blocks_;    // per relation into an aggregate-first selected type: its rows of M_r
  std::vector<char> input_grad_;
  std::vector<kernels::ConstTensorView> inputs_;   // x, kept by a training forward
  std::vector<InputMatrix> streamed_inputs_;       // and the streamed inputs
  std::vector<kernels::Tensor> stacked_inputs_;    // per aggregate-first type: [A_r ... | x_t]
  std::vector<kernels::Tensor> stacked_weights_;   // and [W_r; ...; W_root,t]
  std::vector<kernels::Tensor> panel_weights_;     // per panel's source type: [W_a | W_b | ...]
  bool saved_ = false;                            // a training forward is waiting for its backward
};

}  // namespace halo::train
