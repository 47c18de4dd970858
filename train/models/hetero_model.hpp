// HeteroModel: a network over a heterogeneous graph, a stack of HeteroLayers (train/layers/
// hetero_layer.hpp) with dropout on their inputs and ReLU where the kind says: R-GCN (the OGB R-GCN
// example for ogbn-mag: RgcnConv layers), HGT (PyG's HGT example: per-type input projections,
// HgtConv layers, an output projection) or RGAT (RgatConv layers). The features of each vertex type are its input or, for
// a type without features, a learnable EmbeddingTable updated sparsely; the output is the logits
// of the labelled (target) type. Hand-written forward and backward.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/bf16_rows.hpp"
#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/embedding_table.hpp"
#include "train/layers/hetero_layer.hpp"
#include "train/layers/parameter.hpp"
#include "train/layers/step.hpp"
#include "train/models/hetero_model_layout.hpp"
#include "train/models/model_config.hpp"
#include "train/optimizer.hpp"

namespace halo::train {

struct HeteroModelConfig {
  // "rgcn": `layers` RgcnConv layers, ReLU and dropout between them, the last one the logits.
  // "hgt": PyG's HGT example: a TypedLinear per type (input width -> hidden) and ReLU, `layers`
  // HgtConv layers (hidden -> hidden, `heads` heads), a TypedLinear on the target (hidden ->
  // classes); dropout on the inputs of every layer after the first.
  // "rgat": `layers` RgatConv layers (per-relation GAT summed over the relations, PyG's HeteroConv
  // of GATConv): every hidden layer `heads` heads of `hidden` columns concatenated, the last
  // `out_heads` heads of the class count (averaged when more than one); ReLU and dropout between.
  std::string kind = "rgcn";
  int layers = 2;
  std::int64_t hidden = 64;
  float dropout = 0.5f;        // on the input of every layer after the first (after its ReLU)
  float input_dropout = 0.0f;  // on the first layer's inputs, features and embeddings alike
  // 0: one weight per relation. B > 0: W_r = Σ_b a_rb · V_b in every layer whose relations all
  // read one input width (every layer after the first; the first only when the features and
  // embeddings of all source types share a width, as in ogbn-mag with embedding_dim 128); a
  // layer whose widths differ keeps one weight per relation (uses_bases() says which).
  int num_bases = 0;
  bool bias = true;                     // a bias per vertex type in every layer
  std::int64_t embedding_dim = 128;     // width of the tables of types without features
  std::int64_t heads = 1;               // hgt, rgat: attention heads per (hidden) layer; hgt: hidden divisible by it
  std::int64_t out_heads = 1;           // rgat: heads of the last layer
  float attention_dropout = 0.0f;       // rgat: on the attention coefficients, in training
  float negative_slope = 0.2f;          // rgat: of the LeakyReLU on the attention scores
  float weight_decay = 0.0f;            // weight matrices (R-GCN: relation weights or bases and comp, roots); biases 0
  float embedding_weight_decay = 0.0f;  // the tables' decay (applied by sparse_step to touched rows only)
  // 0: the tables live on the model's device. B > 0: the tables are streamed, as features too
  // large for the device are (train/features/feature_pipeline.hpp): each stays in host memory with its
  // gradient and Adam state (sparse_step runs on the host), and the first layer reads it in row
  // chunks through a FeaturePipeline on the model's device, within B bytes there for all tables
  // (split evenly; each table's share holds two staging chunks and the chunk its gradient comes
  // back in). No cache: the values change every step. Distributed models refuse it.
  std::int64_t table_stream_budget = 0;
};

// The settings of a user's ModelConfig of a heterogeneous kind ("rgcn", "hgt"): its kind, layers,
// widths, heads, dropout, bias and decays; the tables resident (the trainer sets
// table_stream_budget).
HeteroModelConfig hetero_model_config(const ModelConfig& config);

namespace dist {
class HaloExchange;
}

// What a model on one rank of a distributed run needs beyond its part's RgcnGraph, per vertex
// type (graph order): the exchange that fills the type's halo rows (its inputs after its
// outputs) from their owners and sends their gradients back (null for a type without halo
// rows), the global id of each input row (dropout keys), and the global id of each type's
// vertex 0 (type_offsets, types + 1 entries: the whole graph's type sizes, which its embedding
// tables and their initialisation have). The exchanges and ids must outlive the model.
struct HeteroHaloRows {
  std::vector<dist::HaloExchange*> exchanges;
  std::vector<kernels::IndexView> global_ids;
  std::vector<std::int64_t> type_offsets;
};

class HeteroModel {
 public:
  // features: one per vertex type of `graph`, in its type order: the type's features (vertices
  // x width, on `device`), or nullptr for a type without, which gets an EmbeddingTable of
  // embedding_dim columns named "embedding.<type>" on `device` (on a GPU its sparse Adam runs
  // there too). `graph` and the feature tensors must outlive the model and stay unchanged.
  // Output: logits of `target_type` (its vertices x num_classes). Dense parameters are the
  // layers', named "convI.<...>" (train/layers/rgcn_conv.hpp, hgt_conv.hpp) and for HGT
  // "input.<type>.weight", "output.<type>.weight" and their biases (typed_linear.hpp).
  // Initialisation depends on `seed` only: each layer's initialize (Glorot-uniform weights, zero
  // biases; HGT's priors and skip gates 1) and Glorot-uniform tables; each tensor draws from the
  // stream of its position in parameters(), the tables numbered on after them in type order.
  // Weight decay as HeteroModelConfig says. Throws InvalidArgument for a bad configuration or inputs that
  // do not match the graph.
  //
  // On a rank of a distributed run, `halo` describes the halo rows: features then have the
  // type's input rows (the caller fills the halo rows once), a table holds the type's output
  // (owned) rows of the whole graph's table, with the values a single process draws for them,
  // and every layer's forward and backward exchange each type's halo rows (collective: every
  // rank runs the same steps). Losses and gradients then equal the single process's up to the
  // order of additions (each row's neighbours are summed in the order its RgcnGraph gives).
  // Such a model trains on the CPU only (UnsupportedError with `halo` on a GPU).
  //
  // `bf16_features` (per type, or empty): features kept in bfloat16 in place of float32 ones (the
  // type's entry of `features` is then nullptr), at half the bytes, for a type the layout keeps
  // so (HeteroModelLayout::keeps_bf16: the first layer reads it only through products); each
  // product widens them chunk by chunk. InvalidArgument for a type whose features the first layer
  // reads whole (R-GCN's), on a rank, or given both ways.
  HeteroModel(const HeteroModelConfig& config, const RgcnGraph& graph, std::vector<const kernels::Tensor*> features,
              int target_type, std::int64_t num_classes, std::uint64_t seed,
              kernels::Device device = kernels::Device::cpu(), const HeteroHaloRows* halo = nullptr,
              std::vector<const kernels::Bf16Rows*> bf16_features = {});
  ~HeteroModel();
  HeteroModel(HeteroModel&&) noexcept;
  HeteroModel& operator=(HeteroModel&&) noexcept;

  // Logits of the target type. Per layer: dropout on every input the layer reads (mask keyed on step's
  // seed and epoch, the layer, and the vertex's global id = the vertex counts of the types before
  // it + its index, so the same on any thread count or device), the layer, and ReLU where the
  // kind puts one. A training forward keeps what backward needs; an evaluation forward
  // (dropout off) keeps nothing. step.global_ids must be empty (the model numbers the vertices of
  // all types itself). Each layer computes only the types the rest of the network reads: the last
  // one the target's, each one before that the outputs the next layer reads (so a type
  // nothing reaches the target from is never computed), and an RgcnConv picks per type the cheaper
  // order of multiplying and aggregating. Deterministic; the result does not depend on the
  // thread count.
  kernels::Tensor forward(const Step& step);
  // From d loss / d logits (target vertices x num_classes) of the last forward, which must have
  // been a training one, with that forward's `step`: adds every dense parameter's gradient, and
  // each table's gradient row by row, touching (EmbeddingTable) exactly the rows whose gradient
  // is nonzero: in whole-graph training those within `layers` hops of a vertex whose logits'
  // gradient is nonzero. Frees what the forward kept.
  void backward(kernels::Tensor grad_logits, const Step& step);

  // From now on a training forward returns the logits of these target rows only (row k: target
  // vertex rows[k]; on a rank, its output row rows[k]), all the training loss reads, and the last
  // layer computes no others (HeteroLayer::set_training_rows); backward then takes their gradient.
  // An evaluation forward still returns every row. InvalidArgument for a row out of range or
  // listed twice.
  void set_training_rows(kernels::IndexView rows);

  // The dense parameters, for the optimiser: every layer's parameters() in layer order. The tables are not among them: sparse_step updates them.
  std::vector<Parameter*> parameters();
  // Every tensor a checkpoint must keep apart from the dense parameters and their optimiser
  // state: per table (type order) its values "embedding.<type>" and its sparse Adam moments
  // "embedding.<type>.exp_avg" and ".exp_avg_sq".
  std::vector<std::pair<std::string, kernels::Tensor*>> buffers();
  // Per table (type order) its per-row Adam step counts, "embedding.<type>.steps" (host arrays:
  // on a GPU copies made by this call, which the next sparse_step takes back with whatever a
  // checkpoint wrote into them; EmbeddingTable::row_steps).
  std::vector<std::pair<std::string, Array<std::int64_t>*>> counters();
  // Zeroes the dense gradients and drops the tables' pending gradients.
  void zero_grad();
  // One sparse Adam / AdamW step (config's kind, lr, betas, eps) of every table over its touched
  // rows (EmbeddingTable::step); nothing without tables. O(rows + touched · dim) per table.
  void sparse_step(const OptimizerConfig& config);

  const HeteroModelConfig& config() const;
  int target_type() const;
  std::int64_t num_classes() const;
  int num_layers() const;
  // The table of a vertex type, or nullptr for a type with features.
  EmbeddingTable* embedding(int type);
  // Whether layer `layer` composes its relation weights from bases (R-GCN).
  bool uses_bases(int layer) const;
  // Whether the tables are streamed (config.table_stream_budget > 0 and some type has a table),
  // and the rows per chunk of a type's table (0 for a type whose table is not streamed).
  bool streams_tables() const;
  std::int64_t table_chunk_rows(int type) const;

  // What the model holds (its layers' layouts, its tables) and the memory plan's byte counts.
  const HeteroModelLayout& layout() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace halo::train
