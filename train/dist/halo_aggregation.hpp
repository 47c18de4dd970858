// HaloAggregation: the Aggregation of one rank of a distributed run. Forward: the layer input's
// owned rows are extended with the halo rows (HaloExchange::forward), then the part's local
// operator (num_owned x num_local) multiplies them. Backward: the local operator's transpose
// gives gradients for owned and halo rows, and the halo rows' gradients go back to their owners
// (HaloExchange::backward). Layers are written once against Aggregation and never see ranks.
// On a GPU the operator and its transpose are copied there once (kernels::cuda::DeviceCsr, as
// LocalAggregation does), so an epoch moves no graph data.
#pragma once

#include <cstdint>
#include <string>

#include "graph/csr.hpp"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "partition/local_graph.hpp"
#include "train/aggregation.hpp"
#include "train/dist/halo_exchange.hpp"
#include "train/model.hpp"

namespace halo::train::dist {

class HaloAggregation : public Aggregation {
 public:
  // `a`: num_owned x num_local weighted operator in the part's local numbering; `exchange` must
  // outlive the aggregation. Builds the transpose once, O(E + V) on the host; on a GPU `device`
  // also copies both there (O(E) host-to-device traffic; UnsupportedError when the GPU cannot be
  // used) and keeps only their shapes on the host. The tensors given must live on `device`
  // (InvalidArgument otherwise, naming both devices).
  HaloAggregation(graph::CsrGraph a, HaloExchange& exchange, kernels::Device device = kernels::Device::cpu());
  std::int64_t num_vertices() const override { return num_owned_; }
  // One halo exchange of x's width and one SpMM.
  kernels::Tensor forward(const kernels::Tensor& x) override;
  // One SpMM with the transpose and one reverse halo exchange of grad_y's width.
  kernels::Tensor backward(const kernels::Tensor& grad_y) override;
  const kernels::Device& device() const { return device_; }

 private:
  void check_device(const char* what, const kernels::Tensor& t) const;

  std::int64_t num_owned_;
  std::int64_t num_local_;
  kernels::Device device_;
  graph::CsrGraph a_;             // on the CPU: A and Aᵀ on the host; empty on a GPU
  graph::CsrGraph a_transposed_;
  kernels::cuda::DeviceCsr gpu_a_;  // on a GPU: A and Aᵀ there
  kernels::cuda::DeviceCsr gpu_a_transposed_;
  HaloExchange* exchange_;
};

// The operators of a model of `kind` ("gcn" or "sage") on a part: exactly the rows of
// build_graph_operators' operators for the part's owned vertices, with the same weights to the
// last bit (the GCN degrees of halo vertices come from their owners through `exchange`) and each
// row's entries in ascending global column order, so the SpMM adds a row's terms in the order the
// single-process run does. The products run on `device` (a GPU: the operators are uploaded
// there once). Collective: every rank must call it. O(part edges · log(degree)).
GraphOperators build_part_operators(const partition::LocalGraph& part, const std::string& kind,
                                    HaloExchange& exchange, kernels::Device device = kernels::Device::cpu());

}  // namespace halo::train::dist
