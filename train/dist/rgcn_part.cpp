// rgcn_part: a heterogeneous part renumbered type by type, its relations as per-type CSRs in
// global-id order, and the per-type halo maps.
#include "train/dist/rgcn_part.hpp"

#include <algorithm>
#include <utility>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::train::dist {
namespace {

int type_named(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  HALO_EXPECTS(it != names.end(), "rgcn_part: the partition has no vertex type '" + name + "'");
  return static_cast<int>(it - names.begin());
}

// Relation `rel` of the part (rows: the part's owned vertices; columns: its local vertices),
// restricted to the owned rows of type `dst` and renumbered: column c becomes row_in_type[c],
// each row's entries sorted by the global id of their column.
template <class I>
graph::CsrGraph type_relation(const graph::CsrGraph& rel, std::int64_t first_row, std::int64_t rows,
                              std::int64_t cols, const std::vector<std::int64_t>& row_in_type,
                              const Array<std::int64_t>& local_to_global) {
  auto indptr = Array<std::int64_t>::vector(rows + 1);
  for (std::int64_t i = 0; i <= rows; ++i) indptr[i] = rel.indptr()[first_row + i] - rel.indptr()[first_row];
  auto indices = Array<I>::vector(indptr[rows]);
  const std::int64_t base = rel.indptr()[first_row];
  graph::visit(rel, [&](auto v) {
    parallel_for(0, rows, [&](std::int64_t i) {
      std::vector<std::int64_t> entries(v.indices + v.indptr[first_row + i], v.indices + v.indptr[first_row + i + 1]);
      std::sort(entries.begin(), entries.end(),
                [&](std::int64_t a, std::int64_t b) { return local_to_global[a] < local_to_global[b]; });
      for (std::size_t k = 0; k < entries.size(); ++k)
        indices[v.indptr[first_row + i] - base + static_cast<std::int64_t>(k)] =
            static_cast<I>(row_in_type[static_cast<std::size_t>(entries[k])]);
    });
  });
  return graph::CsrGraph(rows, cols, std::move(indptr), std::move(indices));
}

}  // namespace

RgcnGraph RgcnPart::graph(graph::IndexType index_type) const {
  std::vector<RgcnGraph::RelationInput> inputs;
  for (std::size_t r = 0; r < relations.size(); ++r)
    inputs.push_back({relation_types[r], relation_src[r], relation_dst[r], &relations[r]});
  return RgcnGraph(type_names, num_outputs, num_inputs, inputs, index_type);
}

RgcnPart rgcn_part(const partition::Part& part, const partition::PartitionDirInfo& info) {
  const partition::LocalGraph& g = part.graph;
  HALO_EXPECTS(part.meta.is_hetero && g.vertex_type.size() == g.num_local(),
               "rgcn_part: part " + std::to_string(g.rank) + " is not of a heterogeneous dataset");
  RgcnPart out;
  for (const datasets::NodeTypeInfo& t : info.node_types) out.type_names.push_back(t.name);
  out.type_offsets = info.type_offsets;
  const auto types = out.type_names.size();
  HALO_EXPECTS(g.owned_type_offsets.size() == types + 1 && out.type_offsets.size() == types + 1,
               "rgcn_part: part " + std::to_string(g.rank) + " has " + std::to_string(g.owned_type_offsets.size()) +
                   " type offsets for " + std::to_string(types) + " vertex types");
  out.owned_offsets = g.owned_type_offsets;

  // Each local vertex's row within its type: owned rows first, then the type's halo rows in
  // the part's halo order.
  std::vector<std::int64_t> row_in_type(static_cast<std::size_t>(g.num_local()));
  std::vector<std::int64_t> next(types);
  for (std::size_t t = 0; t < types; ++t) {
    const std::int64_t owned = g.owned_type_offsets[t + 1] - g.owned_type_offsets[t];
    out.num_outputs.push_back(owned);
    for (std::int64_t v = g.owned_type_offsets[t]; v < g.owned_type_offsets[t + 1]; ++v)
      row_in_type[static_cast<std::size_t>(v)] = v - g.owned_type_offsets[t];
    next[t] = owned;
  }
  for (std::int64_t v = g.num_owned; v < g.num_local(); ++v)
    row_in_type[static_cast<std::size_t>(v)] = next[static_cast<std::size_t>(g.vertex_type[v])]++;
  out.num_inputs = next;
  for (std::size_t t = 0; t < types; ++t) {
    out.global_ids.push_back(Array<std::int64_t>::vector(out.num_inputs[t]));
    for (std::int64_t v = g.owned_type_offsets[t]; v < g.owned_type_offsets[t + 1]; ++v)
      out.global_ids[t][v - g.owned_type_offsets[t]] = g.local_to_global[v];
  }
  for (std::int64_t v = g.num_owned; v < g.num_local(); ++v)
    out.global_ids[static_cast<std::size_t>(g.vertex_type[v])][row_in_type[static_cast<std::size_t>(v)]] =
        g.local_to_global[v];

  HALO_EXPECTS(g.relations.size() == info.relations.size(),
               "rgcn_part: part " + std::to_string(g.rank) + " has " + std::to_string(g.relations.size()) +
                   " relations, the partition " + std::to_string(info.relations.size()));
  for (std::size_t r = 0; r < info.relations.size(); ++r) {
    const graph::RelationType& type = info.relations[r].type;
    HALO_EXPECTS(g.relation_keys[r] == type.key(), "rgcn_part: relation " + std::to_string(r) + " of part " +
                                                       std::to_string(g.rank) + " is " + g.relation_keys[r] +
                                                       ", the partition lists " + type.key());
    const int src = type_named(out.type_names, type.src);
    const int dst = type_named(out.type_names, type.dst);
    out.relation_types.push_back(type);
    out.relation_src.push_back(src);
    out.relation_dst.push_back(dst);
    const auto d = static_cast<std::size_t>(dst);
    const std::int64_t cols = out.num_inputs[static_cast<std::size_t>(src)];
    out.relations.push_back(
        graph::index_type_for(cols) == graph::IndexType::i32
            ? type_relation<std::int32_t>(g.relations[r], g.owned_type_offsets[d], out.num_outputs[d], cols,
                                          row_in_type, g.local_to_global)
            : type_relation<std::int64_t>(g.relations[r], g.owned_type_offsets[d], out.num_outputs[d], cols,
                                          row_in_type, g.local_to_global));
  }

  // Per type: the halo maps restricted to its rows. Filtering keeps every list's order, so the
  // owner's send list to q still matches q's halo list from the owner.
  const auto parts = static_cast<std::size_t>(g.num_parts);
  for (std::size_t t = 0; t < types; ++t) {
    partition::LocalGraph e;
    e.rank = g.rank;
    e.num_parts = g.num_parts;
    e.num_owned = out.num_outputs[t];
    e.num_halo = out.num_inputs[t] - out.num_outputs[t];
    e.local_to_global = out.global_ids[t].clone();
    std::vector<std::int32_t> owners;
    std::vector<std::int64_t> recv{0}, send{0}, rows;
    for (std::size_t q = 0; q < parts; ++q) {
      for (std::int64_t h = g.recv_offsets[q]; h < g.recv_offsets[q + 1]; ++h)
        if (static_cast<std::size_t>(g.vertex_type[g.num_owned + h]) == t) owners.push_back(static_cast<std::int32_t>(q));
      recv.push_back(static_cast<std::int64_t>(owners.size()));
      for (std::int64_t k = g.send_offsets[q]; k < g.send_offsets[q + 1]; ++k) {
        const std::int64_t row = g.send_rows[k];
        if (static_cast<std::size_t>(g.vertex_type[row]) == t) rows.push_back(row - g.owned_type_offsets[t]);
      }
      send.push_back(static_cast<std::int64_t>(rows.size()));
    }
    e.halo_owner = Array<std::int32_t>::from_vector(owners);
    e.recv_offsets = Array<std::int64_t>::from_vector(recv);
    e.send_offsets = Array<std::int64_t>::from_vector(send);
    e.send_rows = Array<std::int64_t>::from_vector(rows);
    e.owned_type_offsets = {0, e.num_owned};
    out.exchange_graphs.push_back(std::move(e));
  }
  return out;
}

}  // namespace halo::train::dist
