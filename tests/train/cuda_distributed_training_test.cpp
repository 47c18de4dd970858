// Tests of partitioned training on a GPU in one process (train/dist/distributed_trainer.*,
// train/dist/halo_aggregation.* on CUDA): the part's operators on the GPU give the host's
// products, and GCN / GraphSAGE trained on a one-part partition on the GPU, over a
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
#include <vector>

#include "datasets/checksum.hpp"
#include "datasets/dataset_dir.hpp"
#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "partition/partition_dir.hpp"
#include "partition/partitioner.hpp"
#include "tests/support/gpu.hpp"
#include "tests/support/nccl.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/write_partition.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/dist/distributed_trainer.hpp"
#include "train/dist/halo_aggregation.hpp"
#include "train/dist/halo_exchange.hpp"
#include "train/dist/nccl_communicator.hpp"
#include "train/trainer.hpp"

using namespace halo;
using namespace halo::train;
using kernels::Device;
using kernels::Tensor;

namespace {


Tensor random_tensor(std::uint64_t seed, std::int64_t rows, std::int64_t cols) {
  RandomStream rng(seed, 0);
  std::vector<float> v(static_cast<std::size_t>(rows * cols));
  for (float& x : v) x = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  return Tensor::from_vector(rows, cols, v);
}

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

TEST_CASE("train_partitioned on one GPU gives the single-GPU run's losses, over the local or the NCCL communicator",
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
  const TrainSummary part = dist::train_partitioned(parts, comm, model, config);
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
