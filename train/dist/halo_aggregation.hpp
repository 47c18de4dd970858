// HaloAggregation: the Aggregation of one rank of a distributed run. Forward: the layer input's
// owned rows are extended with the halo rows (HaloExchange::forward), then the part's local
// operator (num_owned x num_local) multiplies them. Backward: the local operator's transpose
// gives gradients for owned and halo rows, and the halo rows' gradients go back to their owners
// (HaloExchange::backward). Layers are written once against Aggregation and never see ranks.
#pragma once

#include <cstdint>
#include <string>

#include "graph/csr.hpp"
#include "kernels/tensor.hpp"
#include "partition/local_graph.hpp"
#include "train/aggregation.hpp"
#include "train/dist/halo_exchange.hpp"
#include "train/model.hpp"

namespace halo::train::dist {

class HaloAggregation : public Aggregation {
 public:
  // `a`: num_owned x num_local weighted operator in the part's local numbering; `exchange` must
  // outlive the aggregation. Builds the transpose once, O(E + V).
  HaloAggregation(graph::CsrGraph a, HaloExchange& exchange);
  std::int64_t num_vertices() const override { return a_.num_rows(); }
  // One halo exchange of x's width and one SpMM.
  kernels::Tensor forward(const kernels::Tensor& x) override;
  // One SpMM with the transpose and one reverse halo exchange of grad_y's width.
  kernels::Tensor backward(const kernels::Tensor& grad_y) override;

 private:
  graph::CsrGraph a_;
  graph::CsrGraph a_transposed_;
  HaloExchange* exchange_;
};

// The operators of a model of `kind` ("gcn" or "sage") on a part: exactly the rows of
// build_graph_operators' operators for the part's owned vertices, with the same weights to the
// last bit (the GCN degrees of halo vertices come from their owners through `exchange`) and each
// row's entries in ascending global column order, so the SpMM adds a row's terms in the order the
// single-process run does. Collective: every rank must call it. O(part edges · log(degree)).
GraphOperators build_part_operators(const partition::LocalGraph& part, const std::string& kind,
                                    HaloExchange& exchange);

}  // namespace halo::train::dist
