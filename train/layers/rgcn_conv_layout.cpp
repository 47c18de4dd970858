// RgcnConvLayout: an RgcnConv's decisions (outputs, reads, orders, bands, panels) and the bytes
// its parameters, saved tensors, workspace and sparse matrices take, from counts alone.
#include <algorithm>
#include <utility>

#include "graph/base/error.hpp"
#include "train/layers/rgcn_conv.hpp"

namespace halo::train {
namespace {

constexpr std::int64_t float_bytes = sizeof(float);

// Host bytes of a CSR with `rows` rows and `entries` weighted entries of `id_bytes`-wide column ids.
std::int64_t csr_bytes(std::int64_t rows, std::int64_t entries, std::int64_t id_bytes) {
  return 8 * (rows + 1) + entries * (id_bytes + 4);
}

// Per block of the stack: its entries in the rows `rows` (each counted as often as it is listed,
// as graph::select_rows takes them). InvalidArgument naming the first row outside the stack's.
// O(rows + their entries · log blocks).
std::vector<std::int64_t> selected_block_entries(const graph::RelationStack& s, kernels::IndexView rows) {
  std::vector<std::int64_t> taken(static_cast<std::size_t>(s.num_blocks()), 0);
  graph::visit(s.csr, [&](const auto& a) {
    for (std::int64_t i = 0; i < rows.size; ++i) {
      const std::int64_t row = rows.data[i];
      HALO_EXPECTS(row >= 0 && row < a.num_rows, "training row " + std::to_string(row) + " (entry " +
                                                     std::to_string(i) + ") is not one of the relation stack's " +
                                                     std::to_string(a.num_rows) + " rows");
      for (std::int64_t e = a.indptr[row]; e < a.indptr[row + 1]; ++e) {
        const auto block =
            std::upper_bound(s.block_offsets.begin(), s.block_offsets.end(), static_cast<std::int64_t>(a.indices[e])) -
            s.block_offsets.begin() - 1;
        ++taken[static_cast<std::size_t>(block)];
      }
    }
  });
  return taken;
}

}  // namespace

RgcnConvLayout::RgcnConvLayout(const RgcnGraph& graph, std::vector<std::int64_t> in_dims_, std::int64_t out_dim_,
                               int num_bases_, bool bias_, const RgcnConvOptions& options, const std::string& name)
    : in_dims(std::move(in_dims_)), out_dim(out_dim_), num_bases(num_bases_), bias(bias_) {
  const int types = graph.num_vertex_types();
  const int relations = graph.num_relations();
  HALO_EXPECTS(static_cast<int>(in_dims.size()) == types, "RgcnConv " + name + ": expected one input width per " +
                                                              "vertex type (" + std::to_string(types) + "), got " +
                                                              std::to_string(in_dims.size()));
  for (std::int64_t d : in_dims)
    HALO_EXPECTS(d > 0, "RgcnConv " + name + ": input widths must be positive, got " + std::to_string(d));
  HALO_EXPECTS(out_dim > 0, "RgcnConv " + name + ": out_dim must be positive, got " + std::to_string(out_dim));
  HALO_EXPECTS(num_bases >= 0, "RgcnConv " + name + ": num_bases must be >= 0, got " + std::to_string(num_bases));

  computes.assign(static_cast<std::size_t>(types), options.outputs.empty() ? 1 : 0);
  for (int t : options.outputs) {
    HALO_EXPECTS(t >= 0 && t < types, "RgcnConv " + name + ": output type " + std::to_string(t) + " is not one of the " +
                                          std::to_string(types) + " vertex types");
    computes[static_cast<std::size_t>(t)] = 1;
  }
  reads = computes;  // the root terms
  streamed.assign(static_cast<std::size_t>(types), 0);
  for (int t : options.streamed) {
    HALO_EXPECTS(t >= 0 && t < types, "RgcnConv " + name + ": streamed type " + std::to_string(t) +
                                          " is not one of the " + std::to_string(types) + " vertex types");
    streamed[static_cast<std::size_t>(t)] = 1;
  }
  slot.assign(static_cast<std::size_t>(relations), -1);
  for (int r = 0; r < relations; ++r) {
    if (computes[static_cast<std::size_t>(graph.relation_dst(r))] == 0) continue;
    slot[static_cast<std::size_t>(r)] = static_cast<int>(computed.size());
    computed.push_back(r);
    reads[static_cast<std::size_t>(graph.relation_src(r))] = 1;
  }
  HALO_EXPECTS(num_bases == 0 || !computed.empty(), "RgcnConv " + name + ": bases need at least one relation");
  if (num_bases > 0) {
    const int first = computed.front();
    const std::int64_t in = in_dims[static_cast<std::size_t>(graph.relation_src(first))];
    for (int r : computed) {
      const std::int64_t w = in_dims[static_cast<std::size_t>(graph.relation_src(r))];
      HALO_EXPECTS(w == in, "RgcnConv " + name + ": bases need one input width for all relations; relation " +
                                graph.relation_type(first).key() + " reads " + std::to_string(in) +
                                " columns, relation " + graph.relation_type(r).key() + " reads " + std::to_string(w));
    }
  }

  aggregate.assign(static_cast<std::size_t>(types), 0);
  bands.resize(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    if (computes[static_cast<std::size_t>(t)] == 0) continue;
    const graph::RelationStack& s = graph.stack(t);
    // A streamed input enters row-wise products only: its readers transform first.
    bool reads_streamed = streamed[static_cast<std::size_t>(t)] != 0;
    for (int r : s.relations) reads_streamed = reads_streamed || streamed[static_cast<std::size_t>(graph.relation_src(r))] != 0;
    RgcnOrder order = reads_streamed ? RgcnOrder::transform_first : options.order;
    if (order == RgcnOrder::automatic)
      order = RgcnConv::order_cost(graph, in_dims, out_dim, t, RgcnOrder::aggregate_first) <
                      RgcnConv::order_cost(graph, in_dims, out_dim, t, RgcnOrder::transform_first)
                  ? RgcnOrder::aggregate_first
                  : RgcnOrder::transform_first;
    if (order != RgcnOrder::aggregate_first || s.num_blocks() == 0) continue;
    aggregate[static_cast<std::size_t>(t)] = 1;
    std::vector<std::int64_t>& b = bands[static_cast<std::size_t>(t)];
    b.push_back(0);
    for (int r : s.relations) b.push_back(b.back() + in_dims[static_cast<std::size_t>(graph.relation_src(r))]);
    b.push_back(b.back() + in_dims[static_cast<std::size_t>(t)]);
  }
  std::vector<char> transform(static_cast<std::size_t>(types), 0);  // the outputs computed transform first
  for (int t = 0; t < types; ++t)
    transform[static_cast<std::size_t>(t)] =
        computes[static_cast<std::size_t>(t)] != 0 && aggregate[static_cast<std::size_t>(t)] == 0 ? 1 : 0;
  panels = detail::RgcnPanelLayout(graph, transform, computed);
}

std::int64_t RgcnConvLayout::basis_input(const RgcnGraph& graph) const {
  return in_dims[static_cast<std::size_t>(graph.relation_src(computed.front()))];
}

std::int64_t RgcnConvLayout::parameter_bytes(const RgcnGraph& graph) const {
  std::int64_t floats = 0;
  if (num_bases == 0) {
    for (int r : computed) floats += in_dims[static_cast<std::size_t>(graph.relation_src(r))] * out_dim;
  } else {
    floats += num_bases * basis_input(graph) * out_dim + static_cast<std::int64_t>(computed.size()) * num_bases;
  }
  for (std::size_t t = 0; t < computes.size(); ++t)
    if (computes[t] != 0) floats += in_dims[t] * out_dim + (bias ? out_dim : 0);  // root and bias
  return floats * float_bytes;
}

std::int64_t RgcnConvLayout::saved_bytes(const RgcnGraph& graph, int selected_type, std::int64_t selected_rows) const {
  // The composed W_r with bases, the aggregate-first stacks [A_r ... | x_t] (of the selected rows
  // only, for a type with training rows) with their stacked weights, and each panel's weights.
  std::int64_t floats = num_bases > 0 ? static_cast<std::int64_t>(computed.size()) * basis_input(graph) * out_dim : 0;
  for (int t = 0; t < graph.num_vertex_types(); ++t) {
    const auto ts = static_cast<std::size_t>(t);
    const std::int64_t rows = t == selected_type && selected_rows >= 0 ? selected_rows : graph.num_outputs(t);
    if (computes[ts] != 0 && aggregate[ts] != 0) floats += (rows + out_dim) * bands[ts].back();
    floats += in_dims[ts] * static_cast<std::int64_t>(panels.bands[ts].size()) * out_dim;
  }
  return floats * float_bytes;
}

std::int64_t RgcnConvLayout::backward_bytes(const RgcnGraph& graph, std::int64_t input_grad_bytes) const {
  const std::int64_t grad_h = panels.rows * out_dim;
  // H's gradient and the stacked output gradients (freed once it is computed).
  const std::int64_t first = grad_h + panels.total_output_rows * out_dim;
  // H's gradient, every weight gradient and the input gradients.
  std::int64_t weights = num_bases > 0 ? static_cast<std::int64_t>(computed.size()) * basis_input(graph) * out_dim : 0;
  for (int t = 0; t < graph.num_vertex_types(); ++t) {
    const auto ts = static_cast<std::size_t>(t);
    weights += in_dims[ts] * static_cast<std::int64_t>(panels.bands[ts].size()) * out_dim;
    if (computes[ts] != 0 && aggregate[ts] != 0) weights += bands[ts].back() * out_dim;
  }
  return std::max(first * float_bytes, (grad_h + weights) * float_bytes + input_grad_bytes);
}

std::int64_t RgcnConvLayout::graph_bytes(const RgcnGraph& graph, int selected_type,
                                         kernels::IndexView selected_rows) const {
  std::int64_t bytes = panels.bytes(graph);
  for (int t = 0; t < graph.num_vertex_types(); ++t) {
    if (aggregate[static_cast<std::size_t>(t)] == 0) continue;
    const graph::RelationStack& s = graph.stack(t);
    const bool selected = t == selected_type;
    const std::vector<std::int64_t> taken =
        selected ? selected_block_entries(s, selected_rows) : std::vector<std::int64_t>{};
    const std::int64_t id = s.csr.index_type() == graph::IndexType::i32 ? 4 : 8;
    // The transpose of a block of `rows` rows: 32-bit ids only when the block's are and its rows fit them.
    const auto transpose_id = [&](std::int64_t rows) {
      return id == 4 && graph::index_type_for(rows) == graph::IndexType::i32 ? 4 : 8;
    };
    for (int k = 0; k < s.num_blocks(); ++k) {
      const auto ks = static_cast<std::size_t>(k);
      const std::int64_t columns = s.block_offsets[ks + 1] - s.block_offsets[ks];
      const std::int64_t entries = graph.relation_edges(s.relations[ks]);
      // The block M_r, and the transpose backward multiplies by: M_r's, or once rows are selected
      // that of the selected rows' block, kept beside M_r (forward multiplies by it in training).
      bytes += csr_bytes(graph.num_outputs(t), entries, id);
      if (!selected) {
        bytes += csr_bytes(columns, entries, transpose_id(graph.num_outputs(t)));
        continue;
      }
      bytes += csr_bytes(selected_rows.size, taken[ks], id) +
               csr_bytes(columns, taken[ks], transpose_id(selected_rows.size));
    }
  }
  return bytes;
}

}  // namespace halo::train
