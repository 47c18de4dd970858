// The global vertex id space of a dataset: type offsets, relations, in-degrees, training ids.
#include "partition/union_graph.hpp"

#include <algorithm>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::partition {

std::int64_t UnionGraph::num_entries() const {
  std::int64_t total = 0;
  for (const Relation& r : relations) total += r.csr->num_edges();
  return total;
}

int UnionGraph::type_of(std::int64_t v) const {
  const auto it = std::upper_bound(type_offsets.begin(), type_offsets.end(), v);
  return static_cast<int>(it - type_offsets.begin()) - 1;
}

int UnionGraph::type_index(const std::string& name) const {
  for (std::size_t t = 0; t < type_names.size(); ++t)
    if (type_names[t] == name) return static_cast<int>(t);
  throw InvalidArgument("UnionGraph::type_index: no vertex type '" + name + "'");
}

UnionGraph union_graph(const datasets::Dataset& ds) {
  UnionGraph g;
  g.is_hetero = ds.meta.is_hetero;
  if (!ds.meta.is_hetero) {
    HALO_EXPECTS(ds.graph.num_rows() == ds.graph.num_cols(),
                 "a homogeneous graph is square, got " + std::to_string(ds.graph.num_rows()) + " x " +
                     std::to_string(ds.graph.num_cols()));
    g.num_vertices = ds.graph.num_rows();
    g.type_names = {ds.node_types.empty() ? std::string("node") : ds.node_types.front().name};
    g.type_offsets = {0, g.num_vertices};
    g.relations.push_back({&ds.graph, std::string(), 0, 0});
    return g;
  }
  const graph::HeteroGraph& h = ds.hetero;
  g.type_offsets.push_back(0);
  for (int t = 0; t < h.num_vertex_types(); ++t) {
    g.type_names.push_back(h.vertex_type_name(t));
    g.type_offsets.push_back(g.type_offsets.back() + h.vertex_count(t));
  }
  g.num_vertices = g.type_offsets.back();
  for (int r = 0; r < h.num_relations(); ++r) {
    const graph::RelationType& type = h.relation_type(r);
    const auto dst = static_cast<std::size_t>(h.vertex_type(type.dst));
    const auto src = static_cast<std::size_t>(h.vertex_type(type.src));
    g.relations.push_back({&h.relation(r), type.key(), g.type_offsets[dst], g.type_offsets[src]});
  }
  return g;
}

Array<std::int64_t> global_train_ids(const datasets::Dataset& ds, const UnionGraph& g) {
  const std::int64_t offset = g.type_offsets[static_cast<std::size_t>(g.is_hetero ? g.type_index(ds.meta.target_type) : 0)];
  Array<std::int64_t> ids = Array<std::int64_t>::vector(ds.split.train.size());
  for (std::int64_t i = 0; i < ids.size(); ++i) ids[i] = ds.split.train[i] + offset;
  return ids;
}

Array<std::int64_t> union_in_degrees(const UnionGraph& g) {
  Array<std::int64_t> degree = Array<std::int64_t>::vector(g.num_vertices);
  std::fill(degree.begin(), degree.end(), 0);
  for (const UnionGraph::Relation& r : g.relations) {
    const std::int64_t* indptr = r.csr->indptr().data();
    std::int64_t* out = degree.data() + r.row_offset;
    parallel_for(0, r.csr->num_rows(), [&](std::int64_t i) { out[i] += indptr[i + 1] - indptr[i]; });
  }
  return degree;
}

}  // namespace halo::partition
