// RgcnConv: Schlichtkrull et al.'s relational graph convolution on a heterogeneous graph, as the
// OGB R-GCN example for ogbn-mag computes it. For every vertex type t and vertex i of type t:
//   y_i = x_i · W_root,t + b_t + Σ_r Σ_{j ∈ N_r(i)} x_j · W_r / c_{i,r},   c_{i,r} = |N_r(i)|,
// r over the relations that end at t, optionally with W_r = Σ_b a_rb · V_b (basis decomposition).
// RgcnGraph holds the graph side (relation stacks and their transposes), built once per graph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/csr.hpp"
#include "graph/hetero_graph.hpp"
#include "graph/relation_stack.hpp"
#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "train/parameter.hpp"
#include "train/step.hpp"

namespace halo::train {

// The relation stack of every vertex type (graph/relation_stack.hpp) and its transpose, and the
// layout of the stacked matrix H = [x_src(r) · W_r]_r that the layers fill with one segmented
// GEMM: one block of rows per relation (a row per source vertex), the blocks grouped by
// destination type in type order and in the graph's relation order within a type, so the blocks
// one type aggregates from are one contiguous range of H's rows (the columns of its stack).
// Vertex types and relations keep the HeteroGraph's indices.
class RgcnGraph {
 public:
  // O(E + R · V) time; holds each relation's entries twice (stack and transpose), as ids of
  // `index_type` (raised to int64 where a stack needs it) and float weights. g is not kept.
  // Deterministic.
  explicit RgcnGraph(const graph::HeteroGraph& g, graph::IndexType index_type = graph::IndexType::i32);

  int num_vertex_types() const { return static_cast<int>(type_names_.size()); }
  int num_relations() const { return static_cast<int>(relations_.size()); }
  const std::string& vertex_type_name(int t) const { return type_names_.at(static_cast<std::size_t>(t)); }
  std::int64_t num_vertices(int t) const { return stack(t).csr.num_rows(); }
  const graph::RelationType& relation_type(int r) const { return relation(r).type; }
  int relation_src(int r) const { return relation(r).src; }
  int relation_dst(int r) const { return relation(r).dst; }
  // Rows of relation r's block: the vertex count of its source type.
  std::int64_t relation_rows(int r) const { return relation(r).rows; }

  // The relations into type t, stacked (rows: t's vertices; columns: rows type_row(t) onwards of H).
  const graph::RelationStack& stack(int t) const { return stacks_.at(static_cast<std::size_t>(t)); }
  const graph::CsrGraph& stack_transpose(int t) const { return transposes_.at(static_cast<std::size_t>(t)); }

  // Rows of H; the first row of relation r's block; the first row of type t's range of blocks.
  std::int64_t stacked_rows() const { return stacked_rows_; }
  std::int64_t block_row(int r) const { return relation(r).row; }
  std::int64_t type_row(int t) const { return type_rows_.at(static_cast<std::size_t>(t)); }

 private:
  struct Relation {
    graph::RelationType type;
    int src = 0;
    int dst = 0;
    std::int64_t rows = 0;  // source vertices
    std::int64_t row = 0;   // first row of the block in H
  };
  const Relation& relation(int r) const { return relations_.at(static_cast<std::size_t>(r)); }

  std::vector<std::string> type_names_;
  std::vector<Relation> relations_;
  std::vector<graph::RelationStack> stacks_;
  std::vector<graph::CsrGraph> transposes_;
  std::vector<std::int64_t> type_rows_;
  std::int64_t stacked_rows_ = 0;
};

class RgcnConv {
 public:
  // in_dims: the input width of every vertex type (in the graph's type order), out_dim the
  // output width of all of them. Parameters, all zero on `device`:
  //  - num_bases = 0: "<name>.weight.<relation key>" (in_dims[src] x out_dim) per relation;
  //  - num_bases = B > 0: "<name>.bases" ((B · in) x out_dim: V_0, ..., V_{B-1}, each in x
  //    out_dim, stacked, the memory layout of PyG's B x in x out weight) and "<name>.comp"
  //    (relations x B, the a_rb); every relation must read the same input width `in`;
  //  - "<name>.root.<type>" (in_dims[t] x out_dim) per type, and with bias "<name>.bias.<type>"
  //    (1 x out_dim) per type.
  // `graph` must outlive the layer.
  RgcnConv(const RgcnGraph& graph, std::vector<std::int64_t> in_dims, std::int64_t out_dim, int num_bases, bool bias,
           const std::string& name, kernels::Device device = kernels::Device::cpu());

  // y[t] (vertices of t x out_dim) for inputs x[t] (vertices of t x in_dims[t]), one per type, all
  // on the parameters' device. One GEMM for the W_r with bases (composing them), one segmented
  // GEMM for every x_src(r) · W_r and x_t · W_root,t, one SpMM per type over its relation stack
  // (out_dim columns), the biases. Temporary: H, stacked_rows x out_dim. In training the layer
  // keeps the views x: the caller keeps them alive and unchanged until backward. Deterministic
  // for a fixed thread count.
  std::vector<kernels::Tensor> forward(const std::vector<kernels::ConstTensorView>& x, const Step& step);

  // From grad_y[t] = d loss / d y[t] of the last training forward: adds d loss / d θ to every
  // parameter's grad and returns d loss / d x[t] for every type whose input gradient is on (an
  // empty tensor for the others). One SpMM per type with the transposed stack (the gradient of
  // H), one segmented GEMM for dW_r += x_srcᵀ · G_r and dW_root,t += x_tᵀ · grad_y[t], one for
  // dx_s = grad_y[s] · W_root,sᵀ + Σ_{r: src(r) = s} G_r · W_rᵀ (summed in relation order), with
  // bases two more GEMMs (dV += aᵀ · dW, da += dW · Vᵀ). Temporary: the gradient of H.
  std::vector<kernels::Tensor> backward(std::vector<kernels::Tensor> grad_y, const Step& step);

  // Relation weights (relation order) or bases and comp, then roots, then biases (type order).
  std::vector<Parameter*> parameters();

  // Whether backward returns d loss / d x[t]; on for every type by default. Switch it off for a
  // type whose input is fixed features; keep it on for a type whose input is an embedding table.
  void set_input_grad(int type, bool needed);
  bool input_grad(int type) const { return input_grad_.at(static_cast<std::size_t>(type)) != 0; }

  int num_bases() const { return num_bases_; }
  // Relation r's own weight (nullptr with bases), the bases and comp (nullptr without).
  Parameter* relation_weight(int r);
  Parameter* bases() { return num_bases_ > 0 ? &bases_ : nullptr; }
  Parameter* comp() { return num_bases_ > 0 ? &comp_ : nullptr; }
  Parameter& root(int t) { return roots_.at(static_cast<std::size_t>(t)); }
  Parameter* bias(int t) { return has_bias_ ? &biases_.at(static_cast<std::size_t>(t)) : nullptr; }

  // Bytes the layer holds from forward to backward: the composed W_r with bases, else 0 (views of
  // the inputs are the caller's).
  std::int64_t saved_bytes() const;
  // Bytes of H (forward) or its gradient (backward), freed before the call returns.
  std::int64_t workspace_bytes() const;

 private:
  kernels::ConstTensorView weight_view(int r) const;
  void check_inputs(const std::vector<kernels::ConstTensorView>& x) const;
  void compose_weights();

  const RgcnGraph* graph_;
  std::string name_;
  std::vector<std::int64_t> in_dims_;
  std::int64_t out_dim_;
  int num_bases_;
  bool has_bias_;
  kernels::Device device_;
  std::vector<Parameter> weights_;  // one per relation, without bases
  Parameter bases_;
  Parameter comp_;
  kernels::Tensor composed_;  // with bases: the W_r stacked, (relations · in) x out_dim
  std::vector<Parameter> roots_;
  std::vector<Parameter> biases_;
  std::vector<char> input_grad_;
  std::vector<kernels::ConstTensorView> inputs_;  // x, kept by a training forward
  bool saved_ = false;                            // a training forward is waiting for its backward
};

}  // namespace halo::train
