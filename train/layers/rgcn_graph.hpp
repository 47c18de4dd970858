// RgcnGraph: the graph side of an R-GCN — every vertex type's relations stacked side by side in
// one CSR with their mean weights — for one process's whole heterogeneous graph or one rank's part
// of it (input rows of a type: its owned vertices, then its halo vertices).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/csr.hpp"
#include "graph/hetero_graph.hpp"
#include "graph/relation_stack.hpp"

namespace halo::train {

// The relation stack of every vertex type (graph/relation_stack.hpp): the graph side of every
// RgcnConv over one graph, built once. Vertex types and relations keep the
// HeteroGraph's indices. A type has input rows (what layers read: x_t) and output rows (what
// they compute: y_t, the first rows of x_t); on one process both are the type's vertices, on a
// rank of a distributed run the inputs add the halo vertices after the owned ones.
class RgcnGraph {
 public:
  // One relation given piece by piece: its type, the indices of its source and destination
  // types, and its CSR (rows: the destination's outputs; columns: the source's inputs) whose
  // rows list their entries in the order they are to be summed. Not kept.
  struct RelationInput {
    graph::RelationType type;
    int src = 0;
    int dst = 0;
    const graph::CsrGraph* csr = nullptr;
  };

  // O(E + R · V) time; holds each relation's entries once, as ids of `index_type` (raised to
  // int64 where a stack needs it) and float weights. g is not kept. Deterministic.
  explicit RgcnGraph(const graph::HeteroGraph& g, graph::IndexType index_type = graph::IndexType::i32);
  // The same for types and relations given explicitly (num_outputs[t] <= num_inputs[t]);
  // InvalidArgument when a relation's CSR does not have its destination's outputs as rows and
  // its source's inputs as columns.
  RgcnGraph(std::vector<std::string> type_names, std::vector<std::int64_t> num_outputs,
            std::vector<std::int64_t> num_inputs, const std::vector<RelationInput>& relations,
            graph::IndexType index_type = graph::IndexType::i32);

  int num_vertex_types() const { return static_cast<int>(type_names_.size()); }
  int num_relations() const { return static_cast<int>(relations_.size()); }
  const std::string& vertex_type_name(int t) const { return type_names_.at(static_cast<std::size_t>(t)); }
  std::int64_t num_outputs(int t) const { return stack(t).csr.num_rows(); }
  std::int64_t num_inputs(int t) const { return inputs_.at(static_cast<std::size_t>(t)); }
  const graph::RelationType& relation_type(int r) const { return relation(r).type; }
  int relation_src(int r) const { return relation(r).src; }
  int relation_dst(int r) const { return relation(r).dst; }
  // Rows of the input relation r reads: its source type's inputs.
  std::int64_t relation_rows(int r) const { return num_inputs(relation(r).src); }
  std::int64_t relation_edges(int r) const { return relation(r).edges; }
  // Relation r's block in the stack of its destination type: stack(relation_dst(r)).relations[k].
  int relation_block(int r) const { return relation(r).block; }

  // The relations into type t, stacked (rows: t's outputs; a column block per relation).
  const graph::RelationStack& stack(int t) const { return stacks_.at(static_cast<std::size_t>(t)); }

 private:
  struct Relation {
    graph::RelationType type;
    int src = 0;
    int dst = 0;
    std::int64_t edges = 0;  // entries
    int block = 0;           // position in the destination's stack
  };
  const Relation& relation(int r) const { return relations_.at(static_cast<std::size_t>(r)); }
  void build(const std::vector<std::int64_t>& num_outputs, const std::vector<RelationInput>& relations,
             graph::IndexType index_type);

  std::vector<std::string> type_names_;
  std::vector<std::int64_t> inputs_;
  std::vector<Relation> relations_;
  std::vector<graph::RelationStack> stacks_;
};

}  // namespace halo::train
