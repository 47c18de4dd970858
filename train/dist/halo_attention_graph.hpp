// HaloAttentionGraph: the AttentionGraph of one rank of a distributed run. Every destination's
// incoming edges are in its owner's part, so each rank runs the softmax of its own rows whole;
// the sources of those edges include halo rows. Forward: the layer's [h | src_score] rows of the
// owned vertices are extended with the halo rows (one HaloExchange of heads · F + heads columns),
// then the fused attention runs on the part. Backward: the kernels give the gradients of every
// local source row, and the halo rows' go back to their owners (the reverse exchange), who add
// them. The attention dropout is keyed on global ids, so P ranks draw the single process's masks.
#pragma once

#include <cstdint>

#include "graph/csr.hpp"
#include "kernels/device.hpp"
#include "kernels/device_index.hpp"
#include "kernels/tensor.hpp"
#include "partition/local_graph.hpp"
#include "train/dist/halo_exchange.hpp"
#include "train/layers/attention_graph.hpp"
#include "train/layers/csr_operator.hpp"

namespace halo::train::dist {

class HaloAttentionGraph : public AttentionGraph {
 public:
  // `a`: the part's rows (owned destinations, one self loop each) over its local columns (owned,
  // then halo), each row in ascending global column order (build_part_operators makes it). Builds
  // the transpose and the global ids on `device`. `exchange` must outlive the graph. O(E + V).
  HaloAttentionGraph(graph::CsrGraph a, const partition::LocalGraph& part, HaloExchange& exchange,
                     kernels::Device device);
  std::int64_t num_vertices() const override { return a_.num_rows(); }
  // Collective (one halo exchange).
  kernels::Tensor forward(const kernels::Tensor& h, const kernels::Tensor& src_score, const kernels::Tensor& dst_score,
                          const kernels::AttentionSpec& spec, AttentionStats& stats) override;
  // Collective (one reverse halo exchange).
  AttentionGrads backward(const kernels::Tensor& h, const kernels::Tensor& src_score, const kernels::Tensor& dst_score,
                          const kernels::AttentionSpec& spec, const AttentionStats& stats,
                          const kernels::Tensor& grad_out) override;

 private:
  CsrOperator a_;
  CsrOperator at_;
  HaloExchange* exchange_;
  kernels::DeviceIndex owned_ids_;  // global ids of the owned rows (the destinations)
  kernels::DeviceIndex local_ids_;  // global ids of every local row (the sources)
};

}  // namespace halo::train::dist
