// ModelConfig: the model a user asks train() for (train/trainer.hpp). Its kind picks the family:
// GCN, GraphSAGE and GAT stacks (train/models/model.hpp) for homogeneous datasets, R-GCN, HGT and
// RGAT (train/models/hetero_model.hpp) for heterogeneous ones.
#pragma once

#include <cstdint>
#include <string>

namespace halo::train {

struct ModelConfig {
  // "gcn" (Kipf & Welling), "sage" (GraphSAGE, mean aggregator), "gat" (Veličković et al.), and
  // for heterogeneous datasets "rgcn" (Schlichtkrull et al.), "hgt" (Hu et al.) or "rgat"
  // (relational GAT: a GAT per relation, summed)
  std::string kind = "gcn";
  int layers = 2;
  std::int64_t hidden = 16;
  float dropout = 0.5f;         // on the input of every layer after the first
  float input_dropout = 0.5f;   // on the input features (the first layer's input)
  bool batch_norm = false;      // GCN / GraphSAGE / GAT: after every hidden layer's convolution, before its activation
  bool bias = true;             // a bias in every conv not followed by batch norm (whose beta shifts instead)
  float weight_decay = 0.0f;    // L2 coefficient of the conv weights (the group(s) below)
  bool weight_decay_first_layer_only = false;  // GCN / GraphSAGE: Kipf & Welling decay only the first layer
  // GAT: every hidden layer has `heads` heads of `hidden` columns, concatenated; the last layer
  // `out_heads` heads of the class count, averaged; ELU between layers. HGT: every layer has
  // `heads` heads of hidden / heads columns. RGAT: as GAT per relation, ReLU between layers.
  std::int64_t heads = 8;
  std::int64_t out_heads = 1;
  float attention_dropout = 0.6f;  // on the attention coefficients, in training
  float negative_slope = 0.2f;     // of the LeakyReLU on the attention scores
  bool residual = false;           // every layer adds x · W_res of its input (PyG's residual=True)
  // What a layer computes again in backward instead of keeping it. "aggregation" (GCN /
  // GraphSAGE): Â·x of the layers that aggregate first (GraphConv::set_recompute_aggregation);
  // "layer": everything a layer would keep beyond its input — GCN / GraphSAGE as "aggregation",
  // GAT x·W and its scores (GatConv::set_recompute_projection); "none" keeps it; "auto" lets
  // train() choose: aggregation only when the memory plan would not fit otherwise. A Model (and
  // ModelShape) given "auto" keeps it.
  std::string recompute = "auto";
  // How the activations a step keeps are stored: "f32", or "bf16" (GCN / GraphSAGE / GAT): every
  // hidden layer's output (the next layer's input, read by its forward and backward, and by
  // ReLU's or ELU's backward) and Â·x of the layers that aggregate first, kept in bfloat16 at
  // half the bytes and widened for every product (in evaluation too: the same function); all
  // arithmetic stays float32. The input dropout's copy and the inputs of layers that aggregate
  // first stay float32 (their SpMM needs them whole).
  std::string activation_dtype = "f32";
  // R-GCN (bases) and R-GCN / HGT (tables) (train/models/hetero_model.hpp's HeteroModelConfig):
  int num_bases = 0;                    // basis matrices per layer; 0 = one weight per relation
  std::int64_t embedding_dim = 128;     // width of the learnt inputs of vertex types without features
  float embedding_weight_decay = 0.0f;  // the embedding tables' decay
};

// True for the kinds that train on heterogeneous datasets ("rgcn", "hgt", "rgat").
bool is_heterogeneous_kind(const std::string& kind);

// Each family's kinds, as the refusals that send a dataset to the other family name them.
inline constexpr const char* homogeneous_kinds = "gcn, sage or gat";
inline constexpr const char* heterogeneous_kinds = "rgcn, hgt or rgat";

// Refuses an unknown kind, and settings the kind's family does not have (R-GCN: batch norm, first
// layer only decay), with InvalidArgument naming them.
void check_model_config(const ModelConfig& config);

}  // namespace halo::train
