// HeteroModelLayout: what a HeteroModel holds, decided from the graph's counts, the input widths and
// the settings alone: its layers (R-GCN: RgcnConv layers; HGT: a TypedLinear per type, HgtConv
// layers, a TypedLinear on the labelled type; RGAT: RgatConv layers), the types each computes and its own layout, which
// layers use bases, the embedding tables and whether they stream. The memory plan reads its byte counts before any
// parameter, table, activation or matrix exists; HeteroModel is built from the same layout, so the
// plan and the model cannot disagree.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "kernels/device.hpp"
#include "train/layers/hgt_conv.hpp"
#include "train/layers/rgat_conv.hpp"
#include "train/layers/rgcn_conv.hpp"
#include "train/layers/rgcn_graph.hpp"
#include "train/layers/typed_linear.hpp"

namespace halo::train {

struct HeteroModelConfig;

// One layer of a heterogeneous model: its own layout (which layer it is), its name, the dropout on
// every input it reads and whether a ReLU follows it.
struct HeteroStageLayout {
  std::variant<RgcnConvLayout, HgtConvLayout, RgatConvLayout, TypedLinearLayout> layer;
  std::string name;
  float dropout = 0.0f;
  bool relu = false;

  const std::vector<std::int64_t>& in_dims() const;
  std::int64_t out_dim() const;  // the output's columns (RGAT: all its heads')
  bool computes(int t) const;
  bool reads(int t) const;
  // Whether the layer reads type t only through products (HeteroLayer::reads_by_products), given
  // that the rows of `selected_type` trained on are picked (a TypedLinear then reads it whole).
  bool reads_by_products(int t, int selected_type = -1) const;
  // The layer's parameters and sparse matrices, in bytes (its layout's).
  std::int64_t parameter_bytes(const RgcnGraph& graph) const;
  // Its sparse matrices, in bytes, before set_training_rows (selected_type -1) or after
  // set_training_rows(selected_type, selected_rows) (R-GCN's aggregate-first type then keeps the
  // selected rows' blocks: RgcnConvLayout::graph_bytes).
  std::int64_t graph_bytes(const RgcnGraph& graph, int selected_type = -1, kernels::IndexView selected_rows = {}) const;
  // What its training forward keeps for backward, in bytes, when `selected_rows` rows of output
  // type `selected_type` are trained on (set_training_rows; -1: every row): R-GCN's
  // aggregate-first stack of that type keeps those rows only; a TypedLinear keeps a copy of
  // those rows of its input.
  std::int64_t saved_bytes(const RgcnGraph& graph, int selected_type = -1, std::int64_t selected_rows = -1) const;
  // The most its backward holds at once besides its outputs' gradients, its saved tensors
  // included, with the input gradients of the types `input_grad` marks (per type) and the inputs
  // `chunked` marks (per type, or empty) read chunk by chunk: the saved tensors, the workspace and
  // the input gradients at once, as R-GCN allocates them (RgcnConvLayout::backward_bytes), or as
  // RGAT frees its relations' saved tensors one by one (RgatConvLayout::backward_held_bytes).
  std::int64_t backward_bytes(const RgcnGraph& graph, const std::vector<char>& input_grad,
                              const std::vector<char>& chunked = {}, int selected_type = -1,
                              std::int64_t selected_rows = -1) const;
  // The rows of output type t a training forward holds at its most when `selected_rows` of them
  // are trained on (-1: every row): those rows, or, for a layer that computes the type whole and
  // then gathers them (RGAT; R-GCN for a type it transforms first), the whole output beside them.
  // And the rows of its gradient that backward holds besides its backward_bytes: the selected
  // rows, or every row for RGAT, which scatters them into a whole gradient first.
  std::int64_t forward_output_rows(const RgcnGraph& graph, int t, std::int64_t selected_rows) const;
  std::int64_t gradient_output_rows(const RgcnGraph& graph, int t, std::int64_t selected_rows) const;
};

class HeteroModelLayout {
 public:
  // feature_widths: per vertex type of `graph` (its type order), the width of its features, or 0
  // for a type without, which gets an embedding table of config.embedding_dim columns. `halo_types`:
  // per type, whether it has halo rows filled by an exchange (a rank of a distributed run; empty
  // on one process). `bf16_features`: per type, whether its features are stored in bfloat16 (or
  // empty: none), which the model then keeps so where keeps_bf16 says. Throws InvalidArgument for
  // the settings HeteroModel refuses (layers, widths, bases, decays, a target outside the types, a
  // table without a positive embedding_dim, a table stream budget below three rows per table).
  // O(layers · (types + relations)).
  HeteroModelLayout(const HeteroModelConfig& config, const RgcnGraph& graph, std::vector<std::int64_t> feature_widths,
                    int target_type, std::int64_t num_classes, kernels::Device device,
                    std::vector<char> halo_types = {}, const std::vector<char>& bf16_features = {});

  // The layers in order (an HGT model has config.layers + 2: its input and output projections).
  int layers() const { return static_cast<int>(stages_.size()); }
  const HeteroStageLayout& stage(int layer) const { return stages_.at(static_cast<std::size_t>(layer)); }
  // Whether layer i composes its relation weights from bases.
  bool uses_bases(int layer) const { return bases_.at(static_cast<std::size_t>(layer)) != 0; }
  // Whether type t's input is an embedding table, and whether that table is streamed; the rows per
  // chunk of a streamed table (0 otherwise).
  bool has_table(int t) const { return feature_widths_.at(static_cast<std::size_t>(t)) == 0; }
  bool streams(int t) const { return table_chunk_rows(t) > 0; }
  std::int64_t table_chunk_rows(int t) const { return chunk_rows_.at(static_cast<std::size_t>(t)); }
  // Type t's input width: its features', or the embedding dimension.
  std::int64_t input_width(int t) const;
  // Whether type t's features stay in bfloat16 (kernels::Bf16Rows, half the bytes), widened chunk
  // by chunk as the first layer reads them: they are stored so, and that layer reads them only
  // through products (RGAT; HGT's input projection), on one process. Else they are float32.
  bool keeps_bf16(int t) const { return !bf16_.empty() && bf16_.at(static_cast<std::size_t>(t)) != 0; }
  // The bytes of the features as the model reads them: float32, or bfloat16 where keeps_bf16.
  std::int64_t feature_bytes() const;

  // For the memory plan, in bytes. activation_bytes: the peak of a step on the model's device apart
  // from the inputs (features and tables), when the last layer trains on `training_rows` rows of
  // the target (HeteroModel::set_training_rows; -1: every row). Training: the most, over the
  // layers, of what forward kept up to a layer (dropout outputs, which replace the previous
  // layer's outputs, undropped layer outputs, each layer's saved_bytes) plus what that layer's
  // forward or backward holds at once (its outputs or their gradients, its backward_bytes, the
  // chunk a dropout acting as the layer reads its input goes through, and its mask's bits: no
  // dropped copy), and
  // the logits beside their gradient once the loss is taken; the last layer's outputs are the
  // logits. Evaluation: a layer's input, its saved tensors (as a bound of its workspace) and its
  // outputs, every row, the logits among them. parameter_bytes: the dense parameters' values
  // (their gradients take as much again). table_bytes: the tables (values, gradients, two Adam
  // moments, per-row step counts and touched flags, and on a rank the tables' rows with their
  // halo rows), on the model's device; streamed tables count only their staging there
  // (table_stream_budget). host_bytes: host memory beyond the dense parameters: the dropout keys
  // (8 bytes per vertex on one process), and the tables when they are in host memory (a model on
  // the CPU, or streamed tables). O(layers · types). graph_bytes: the sparse matrices the layers
  // keep once the last layer trains on `training_rows` of the target (their layouts' graph_bytes:
  // their host sizes), O(layers · relations + those rows' entries). selection_bytes: what the
  // last layer keeps of a selection of `training_rows` rows on the model's device (its
  // TrainingRows, whichever layer it is).
  std::int64_t activation_bytes(std::int64_t training_rows = -1) const;
  std::int64_t parameter_bytes() const;
  std::int64_t table_bytes() const;
  std::int64_t host_bytes() const;
  std::int64_t graph_bytes(kernels::IndexView training_rows) const;
  std::int64_t selection_bytes(std::int64_t training_rows) const;

 private:
  // The layers of each kind; needed[i]: the types HGT or R-GCN layer i computes.
  void add_rgcn_stages(const HeteroModelConfig& config, const std::vector<std::vector<char>>& needed,
                       const std::vector<std::int64_t>& inputs, std::int64_t num_classes);
  void add_hgt_stages(const HeteroModelConfig& config, const std::vector<std::vector<char>>& needed,
                      const std::vector<std::int64_t>& inputs, int target_type, std::int64_t num_classes);
  void add_rgat_stages(const HeteroModelConfig& config, const std::vector<std::vector<char>>& needed,
                       const std::vector<std::int64_t>& inputs, std::int64_t num_classes);
  bool halo(int t) const { return !halo_types_.empty() && halo_types_[static_cast<std::size_t>(t)] != 0; }

  const RgcnGraph* graph_;
  std::vector<std::int64_t> feature_widths_;
  std::int64_t embedding_dim_;
  std::vector<HeteroStageLayout> stages_;
  std::vector<char> bases_;            // per layer
  std::vector<std::int64_t> chunk_rows_;
  std::vector<char> halo_types_;
  std::vector<char> bf16_;  // per type: keeps_bf16 (empty: none)
  int target_;
  kernels::Device device_;
};

}  // namespace halo::train
