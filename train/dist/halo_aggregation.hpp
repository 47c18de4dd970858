// HaloAggregation: the Aggregation of one rank of a distributed run. Forward: the layer input's
// owned rows are extended with the halo rows (HaloExchange), then the part's local operator
// (num_owned x num_local) multiplies them. Backward: the local operator's transpose gives
// gradients for owned and halo rows, and the halo rows' gradients go back to their owners
// (HaloExchange). Layers are written once against Aggregation and never see ranks.
//
// The exchange overlaps the products that do not need it. Forward: the operator's rows are split
// once into interior rows (no halo column) and boundary rows; while the halo rows travel, the
// interior rows are multiplied, and the boundary rows once they have arrived. Backward: the halo
// rows of the transpose's product are computed first and sent, then the owned rows while they
// travel. Every row's terms are added in the order the unsplit product adds them, so the results
// are the unsplit product's: bit for bit on the CPU; on a GPU with halo's kernel too, but for the
// sign of a zero (a boundary row's sum is added onto the 0 the interior product wrote, and
// 0 + -0 is +0); cuSPARSE, when the automatic choice takes it for a piece, rounds as it does for
// any other matrix.
// On a GPU the operator's pieces are copied there once (kernels::cuda::DeviceCsr, as
// LocalAggregation does), so an epoch moves no graph data.
#pragma once

#include <cstdint>
#include <string>

#include "graph/csr.hpp"
#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "partition/local_graph.hpp"
#include "train/dist/halo_exchange.hpp"
#include "train/layers/aggregation.hpp"
#include "train/layers/csr_operator.hpp"
#include "train/models/model.hpp"

namespace halo::train::dist {

class HaloAggregation : public Aggregation {
 public:
  // `a`: num_owned x num_local weighted operator in the part's local numbering; `exchange` must
  // outlive the aggregation. Splits A's rows and builds the transpose's two row ranges once,
  // O(E + V) on the host, holding about as much as A and Aᵀ; on a GPU `device` also copies the
  // pieces there (O(E) host-to-device traffic; UnsupportedError when the GPU cannot be used) and
  // keeps only their shapes on the host. The tensors given must live on `device`
  // (InvalidArgument otherwise, naming both devices).
  HaloAggregation(graph::CsrGraph a, HaloExchange& exchange, kernels::Device device = kernels::Device::cpu());
  std::int64_t num_vertices() const override { return num_owned_; }
  // One halo exchange of x's width, overlapped with the SpMM of the interior rows, then the SpMM
  // of the boundary rows. Collective.
  kernels::Tensor forward(const kernels::Tensor& x) override;
  // The SpMM of the transpose's halo rows, one reverse halo exchange of grad_y's width overlapped
  // with the SpMM of its owned rows. Collective.
  kernels::Tensor backward(const kernels::Tensor& grad_y) override;
  const kernels::Device& device() const { return device_; }

 private:
  void check_device(const char* what, const kernels::Tensor& t) const;

  std::int64_t num_owned_;
  std::int64_t num_local_;
  kernels::Device device_;
  CsrOperator interior_;          // A's rows that read no halo column (num_owned x num_local, the others empty)
  CsrOperator boundary_;          // A's other rows (likewise)
  CsrOperator transposed_owned_;  // Aᵀ's rows [0, num_owned)
  CsrOperator transposed_halo_;   // Aᵀ's rows [num_owned, num_local)
  HaloExchange* exchange_;
};

// The operators of a model of `kind` ("gcn", "sage" or "gat") on a part: exactly the rows of
// build_graph_operators' operators for the part's owned vertices, with the same weights to the
// last bit (the GCN degrees of halo vertices come from their owners through `exchange`) and each
// row's entries in ascending global column order, so the SpMM adds a row's terms in the order the
// single-process run does. The products run on `device` (a GPU: the operators are uploaded
// there once). Collective: every rank must call it. O(part edges · log(degree)).
GraphOperators build_part_operators(const partition::LocalGraph& part, const std::string& kind,
                                    HaloExchange& exchange, kernels::Device device = kernels::Device::cpu());

}  // namespace halo::train::dist
