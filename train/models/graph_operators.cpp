// build_graph_operators: the normalised adjacency matrices a GCN or GraphSAGE model aggregates with,
// and the attention graph of a GAT.
#include <memory>

#include "graph/base/error.hpp"
#include "graph/build.hpp"
#include "train/layers/aggregation.hpp"
#include "train/models/model.hpp"

namespace halo::train {

GraphOperators build_graph_operators(const graph::CsrGraph& g, const std::string& kind, kernels::Device device) {
  HALO_EXPECTS(g.num_rows() == g.num_cols(), "build_graph_operators: needs a square graph, got " +
                                                 std::to_string(g.num_rows()) + " x " + std::to_string(g.num_cols()));
  GraphOperators operators;
  if (kind == "gcn")
    operators.gcn = std::make_unique<LocalAggregation>(graph::gcn_normalize(g), device);
  else if (kind == "sage")
    operators.mean = std::make_unique<LocalAggregation>(graph::mean_normalize(g), device);
  else if (kind == "gat")
    operators.attention = std::make_unique<LocalAttentionGraph>(g, device);
  else
    throw InvalidArgument("build_graph_operators: kind must be gcn, sage or gat, got '" + kind + "'");
  return operators;
}

}  // namespace halo::train
