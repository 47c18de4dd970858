// RgcnGraph: the relation stacks of a whole heterogeneous graph or of one part of it.
#include "train/layers/rgcn_graph.hpp"

#include <utility>

#include "graph/base/error.hpp"

namespace halo::train {

RgcnGraph::RgcnGraph(const graph::HeteroGraph& g, graph::IndexType index_type) {
  std::vector<std::int64_t> counts;
  for (int t = 0; t < g.num_vertex_types(); ++t) {
    type_names_.push_back(g.vertex_type_name(t));
    counts.push_back(g.vertex_count(t));
  }
  inputs_ = counts;
  std::vector<RelationInput> relations;
  for (int r = 0; r < g.num_relations(); ++r) {
    const graph::RelationType& type = g.relation_type(r);
    relations.push_back({type, g.vertex_type(type.src), g.vertex_type(type.dst), &g.relation(r)});
  }
  build(counts, relations, index_type);
}

RgcnGraph::RgcnGraph(std::vector<std::string> type_names, std::vector<std::int64_t> num_outputs,
                     std::vector<std::int64_t> num_inputs, const std::vector<RelationInput>& relations,
                     graph::IndexType index_type)
    : type_names_(std::move(type_names)), inputs_(std::move(num_inputs)) {
  const std::size_t types = type_names_.size();
  HALO_EXPECTS(num_outputs.size() == types && inputs_.size() == types,
               "RgcnGraph: " + std::to_string(types) + " types, " + std::to_string(num_outputs.size()) +
                   " output counts and " + std::to_string(inputs_.size()) + " input counts");
  for (std::size_t t = 0; t < types; ++t)
    HALO_EXPECTS(0 <= num_outputs[t] && num_outputs[t] <= inputs_[t],
                 "RgcnGraph: type " + type_names_[t] + " has " + std::to_string(num_outputs[t]) + " outputs and " +
                     std::to_string(inputs_[t]) + " inputs");
  for (const RelationInput& rel : relations) {
    HALO_EXPECTS(rel.src >= 0 && static_cast<std::size_t>(rel.src) < types && rel.dst >= 0 &&
                     static_cast<std::size_t>(rel.dst) < types && rel.csr != nullptr,
                 "RgcnGraph: relation " + rel.type.key() + " names a type that does not exist or has no CSR");
    const auto src = static_cast<std::size_t>(rel.src);
    const auto dst = static_cast<std::size_t>(rel.dst);
    HALO_EXPECTS(rel.csr->num_rows() == num_outputs[dst] && rel.csr->num_cols() == inputs_[src],
                 "RgcnGraph: relation " + rel.type.key() + " is " + std::to_string(rel.csr->num_rows()) + " x " +
                     std::to_string(rel.csr->num_cols()) + ", expected " + std::to_string(num_outputs[dst]) +
                     " x " + std::to_string(inputs_[src]) + " (outputs of " + type_names_[dst] + " x inputs of " +
                     type_names_[src] + ")");
  }
  build(num_outputs, relations, index_type);
}

void RgcnGraph::build(const std::vector<std::int64_t>& num_outputs, const std::vector<RelationInput>& relations,
                      graph::IndexType index_type) {
  graph::RelationStackOptions options;
  options.index_type = index_type;
  for (const RelationInput& rel : relations)
    relations_.push_back({rel.type, rel.src, rel.dst, rel.csr->num_edges(), 0});
  for (int t = 0; t < num_vertex_types(); ++t) {
    std::vector<int> ids;
    std::vector<const graph::CsrGraph*> blocks;
    for (int r = 0; r < num_relations(); ++r) {
      if (relations_[static_cast<std::size_t>(r)].dst != t) continue;
      relations_[static_cast<std::size_t>(r)].block = static_cast<int>(ids.size());
      ids.push_back(r);
      blocks.push_back(relations[static_cast<std::size_t>(r)].csr);
    }
    stacks_.push_back(graph::stack_relations(t, num_outputs[static_cast<std::size_t>(t)], ids, blocks, options));
  }
}

}  // namespace halo::train
