// Tests of partitioned training on a GPU in one process (train/dist/homogeneous_part_trainer.*,
// train/dist/halo_aggregation.* on CUDA): the part's operators on the GPU give the host's
// products, the overlapped products (halo rows delivered by a peer the test plays) give the
// unsplit ones there, and GCN / GraphSAGE trained on a one-part partition on the GPU, over a
// LocalCommunicator or a one-rank NcclCommunicator, give the single-GPU run's losses to 1e-4.
// Those cases are tagged [gpu] and skip where no GPU is visible; several GPUs: tests/mpi. The
// halo exchange's refusal of GPU tensors over a communicator of host buffers is checked on every
// machine.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "datasets/checksum.hpp"
#include "datasets/dataset_dir.hpp"
#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/cuda/settings.hpp"
#include "kernels/spmm.hpp"
#include "partition/partition_dir.hpp"
#include "partition/partitioner.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"
#include "tests/support/nccl.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/write_partition.hpp"
#include "tests/train/scripted_peer.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/dist/halo_aggregation.hpp"
#include "train/dist/halo_exchange.hpp"
#include "train/dist/nccl_communicator.hpp"
#include "train/trainer.hpp"

using namespace halo;
using namespace halo::train;
using kernels::Device;
using kernels::Tensor;
using test::random_tensor;

namespace {

double max_relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double scale = std::max(1.0, static_cast<double>(std::abs(want[i])));
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])) / scale);
  }
  return worst;
}

// A communicator claiming a second rank, of host buffers.
class TwoHostRanks : public dist::LocalCommunicator {
 public:
  int size() const override { return 2; }
};

}  // namespace

TEST_CASE("the part's operators on a GPU multiply as the host's do, forward and backward", "[gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const datasets::Dataset ds = test::small_sbm();
  test::ScratchDir scratch;
  const partition::Part part = partition::read_part(test::write_random_partition(ds, scratch, 1), 0, {true});
  dist::LocalCommunicator local;
  dist::HaloExchange exchange(part.graph, local);
  const std::string kind = GENERATE("gcn", "sage");
  CAPTURE(kind);
  GraphOperators cpu = dist::build_part_operators(part.graph, kind, exchange);
  GraphOperators gpu = dist::build_part_operators(part.graph, kind, exchange, Device::cuda());
  Aggregation& a_cpu = kind == "gcn" ? *cpu.gcn : *cpu.mean;
  Aggregation& a_gpu = kind == "gcn" ? *gpu.gcn : *gpu.mean;
  const std::int64_t n = part.graph.num_owned;
  const Tensor x = random_tensor(21, n, 7);
  const Tensor g = random_tensor(22, n, 7);
  const Tensor y = a_gpu.forward(test::on_gpu(x));
  const Tensor gx = a_gpu.backward(test::on_gpu(g));
  CHECK(y.device() == Device::cuda());
  CHECK(max_relative_error(y.to_vector(), a_cpu.forward(x).to_vector()) < 1e-5);
  CHECK(max_relative_error(gx.to_vector(), a_cpu.backward(g).to_vector()) < 1e-5);
  CHECK_THROWS_WITH(a_gpu.forward(x), Catch::Contains("cpu") && Catch::Contains("cuda:0"));
}

TEST_CASE("The overlapped products on a GPU, with a peer's rows, give the unsplit products there", "[gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const datasets::Dataset ds = test::small_sbm();
  test::ScratchDir scratch;
  const partition::Part part = partition::read_part(test::write_random_partition(ds, scratch, 2), 0, {true});
  const partition::LocalGraph& g = part.graph;
  RandomStream rng(23, 0);
  auto weights = Array<float>::vector(g.graph().num_edges());
  for (float& w : weights) w = static_cast<float>(0.05 + rng.uniform());
  const graph::CsrGraph a = g.graph().clone().with_weights(std::move(weights));
  // halo's kernel on both sides: the comparison is then exact (cuSPARSE's choice could differ
  // between the split and the whole matrix).
  const kernels::cuda::CudaSettings settings = kernels::cuda::cuda_settings();
  kernels::cuda::CudaSettings halo_kernel = settings;
  halo_kernel.spmm = kernels::cuda::SpmmImpl::halo;
  kernels::cuda::set_cuda_settings(halo_kernel);
  test::ScriptedPeer peer(Device::cuda());
  dist::HaloExchange exchange(g, peer);
  dist::HaloAggregation aggregation(a.clone(), exchange, Device::cuda());
  constexpr std::int64_t w = 16;

  const Tensor x = random_tensor(24, g.num_owned, w);
  const Tensor halo_rows = random_tensor(25, g.num_halo, w);
  peer.from_peer = halo_rows.to_vector();
  Tensor extended = Tensor::empty(g.num_local(), w, Device::cuda());
  kernels::copy(x.view(), extended.view().slice_rows(0, g.num_owned));
  kernels::copy(halo_rows.view(), extended.view().slice_rows(g.num_owned, g.num_local()));
  const kernels::cuda::DeviceCsr whole(a, Device::cuda());
  Tensor want = Tensor::empty(g.num_owned, w, Device::cuda());
  whole.visit([&](const auto& v) { kernels::spmm(v, extended.view(), want.view()); });
  // Equal values (a sum that underflows to -0 may come out +0: boundary rows add onto a 0).
  CHECK(aggregation.forward(test::on_gpu(x)).to_vector() == want.to_vector());

  const Tensor grad = random_tensor(26, g.num_owned, w);
  peer.from_peer = random_tensor(27, g.send_rows.size(), w).to_vector();
  const kernels::cuda::DeviceCsr whole_transposed(graph::transpose(a), Device::cuda());
  Tensor full = Tensor::empty(g.num_local(), w, Device::cuda());
  const Tensor grad_on_gpu = test::on_gpu(grad);
  whole_transposed.visit([&](const auto& v) { kernels::spmm(v, grad_on_gpu.view(), full.view()); });
  const std::vector<float> product = full.to_vector();
  std::vector<float> expected(product.begin(), product.begin() + g.num_owned * w);
  for (std::int64_t i = 0; i < g.send_rows.size(); ++i)
    for (std::int64_t c = 0; c < w; ++c)
      expected[static_cast<std::size_t>(g.send_rows[i] * w + c)] += peer.from_peer[static_cast<std::size_t>(i * w + c)];
  CHECK(aggregation.backward(grad_on_gpu).to_vector() == expected);
  CHECK(peer.to_peer == std::vector<float>(product.begin() + g.num_owned * w, product.end()));
  CHECK(peer.send_unchanged);
  kernels::cuda::set_cuda_settings(settings);
}

TEST_CASE("training a one-part partition on one GPU gives the single-GPU run's losses, over the local or the NCCL communicator",
          "[gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const datasets::Dataset ds = test::small_sbm();
  test::ScratchDir scratch;
  const std::string parts = test::write_random_partition(ds, scratch, 1);
  ModelConfig model = test::small_gcn();
  model.kind = GENERATE("gcn", "sage");
  const bool over_nccl = GENERATE(false, true);
  CAPTURE(model.kind, over_nccl);
  if (over_nccl) HALO_SKIP_WITHOUT_NCCL();
  TrainConfig config = test::short_training(15);
  config.device = Device::cuda();
  const TrainSummary one = train::train(ds, model, config);
  dist::LocalCommunicator local;
  std::unique_ptr<dist::NcclCommunicator> nccl;
  if (over_nccl) nccl = std::make_unique<dist::NcclCommunicator>(local, Device::cuda());
  dist::Communicator& comm = over_nccl ? static_cast<dist::Communicator&>(*nccl) : local;
  const TrainSummary part = train::train(parts, comm, model, config);
  REQUIRE(part.runs.at(0).epochs.size() == one.runs.at(0).epochs.size());
  for (std::size_t e = 0; e < one.runs[0].epochs.size(); ++e) {
    INFO("epoch " << e + 1);
    CHECK(part.runs[0].epochs[e].loss == Approx(one.runs[0].epochs[e].loss).epsilon(1e-4));
  }
  CHECK(part.device == Device::cuda());
  CHECK(part.runs[0].epochs.back().loss < part.runs[0].epochs.front().loss);
}

TEST_CASE("HaloExchange refuses GPU tensors when its communicator moves host buffers, naming NCCL", "[train]") {
  const datasets::Dataset ds = test::small_sbm();
  test::ScratchDir scratch;
  const partition::Part part = partition::read_part(test::write_random_partition(ds, scratch, 2), 0, {true});
  REQUIRE(part.graph.num_halo > 0);
  TwoHostRanks comm;
  dist::HaloExchange exchange(part.graph, comm);
  // Checked before any kernel: the view's memory is never touched (it is host memory, labelled).
  std::vector<float> storage(static_cast<std::size_t>(exchange.num_local() * 4));
  const kernels::TensorView on_gpu{storage.data(), exchange.num_local(), 4, 4, Device::cuda()};
  CHECK_THROWS_AS(exchange.forward(on_gpu), InvalidArgument);
  CHECK_THROWS_WITH(exchange.forward(on_gpu), Catch::Contains("cuda:0") && Catch::Contains("cpu") &&
                                                  Catch::Contains("NCCL"));
  CHECK_THROWS_WITH(exchange.backward(on_gpu), Catch::Contains("gradient") && Catch::Contains("NCCL"));
}
