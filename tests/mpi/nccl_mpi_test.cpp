// NcclCommunicator between the ranks of the MPI world, one GPU each: its all-reduce, all-to-all-v
// and broadcast give what the MpiCommunicator gives on the same data, on device and host buffers;
// and GCN / GraphSAGE trained on the world's parts over NCCL give the single-GPU run's losses to
// 1e-4; and a rank blocked on the GPU behind an all-reduce its peers skip is freed by its
// communicator's watchdog after the collective timeout, and then told why. Tagged [gpu]; every
// rank skips alike unless the build has NCCL and the machine shows at least one GPU per rank (NCCL
// refuses two ranks on one GPU).
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/base/random.hpp"
#include "kernels/tensor.hpp"
#include "partition/partitioner.hpp"
#include "tests/mpi/mpi_world.hpp"
#include "tests/support/gpu.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/dist/nccl_communicator.hpp"
#include "train/dist/rank_gpu.hpp"
#include "train/trainer.hpp"

using namespace halo;
using namespace halo::train::dist;
using kernels::Device;
using kernels::Tensor;

namespace {

// The rank's GPU when every rank can have one over NCCL; otherwise warns and returns false (the
// same answer on every rank of one machine, so the collectives stay in step).
bool rank_gpu(Device& gpu) {
  Communicator& world = test::mpi_world();
  const int visible = kernels::cuda_device_count();
  if (!nccl_available() || visible < world.size()) {
    WARN("skipped: needs NCCL and one GPU per rank (" << visible << " visible, " << world.size() << " ranks)");
    return false;
  }
  gpu = Device::cuda(gpu_of_local_rank(local_rank(world), visible));
  return true;
}

std::vector<float> random_floats(std::uint64_t seed, std::size_t n) {
  RandomStream rng(seed, 0);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  return v;
}

}  // namespace

TEST_CASE("NcclCommunicator between GPUs gives the MPI communicator's results", "[gpu]") {
  Communicator& world = test::mpi_world();
  Device gpu;
  if (!rank_gpu(gpu)) return;
  NcclCommunicator nccl(world, gpu);
  CHECK(nccl.rank() == world.rank());
  CHECK(nccl.size() == world.size());
  CHECK(nccl.device() == gpu);
  const int r = world.rank();
  const int p = world.size();

  SECTION("all_reduce of device floats and host int64") {
    const std::vector<float> mine = random_floats(static_cast<std::uint64_t>(r) + 1, 777);
    std::vector<float> reference = mine;
    all_reduce(world, reference);
    Tensor device = Tensor::from_vector(1, 777, mine, gpu);
    nccl.all_reduce(device.data(), 777, DataType::float32);
    const std::vector<float> got = device.to_vector();
    double worst = 0.0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double want = reference[i];
      worst = std::max(worst, std::abs(got[i] - want) / std::max(1.0, std::abs(want)));
    }
    // Two addends are added the same way in any order; more may be grouped differently.
    CHECK(worst <= (p <= 2 ? 0.0 : 1e-6));
    std::vector<std::int64_t> counts{r + 1, std::int64_t{1} << (40 + r), -r};
    std::vector<std::int64_t> expected = counts;
    all_reduce(world, expected);
    nccl.all_reduce(counts.data(), 3, DataType::int64);
    CHECK(counts == expected);
  }
  SECTION("all_to_all_v of messages of varied sizes, some empty, between device and host buffers") {
    // Rank a sends rank b ((5a + 3b + 1) % 4) * 10 values a·10^4 + b·100 + i (exact in float):
    // 10 to itself, none from 0 to 1.
    auto count = [](int a, int b) { return static_cast<std::int64_t>(((5 * a + 3 * b + 1) % 4) * 10); };
    std::vector<std::int64_t> send_counts, recv_counts;
    std::vector<float> send;
    for (int q = 0; q < p; ++q) {
      send_counts.push_back(count(r, q));
      recv_counts.push_back(count(q, r));
      for (std::int64_t i = 0; i < count(r, q); ++i) send.push_back(static_cast<float>(r * 10000 + q * 100 + i));
    }
    std::int64_t total = 0;
    for (const std::int64_t c : recv_counts) total += c;
    std::vector<float> expected(static_cast<std::size_t>(total), -1.0f);
    world.all_to_all_v(send.data(), send_counts, expected.data(), recv_counts, DataType::float32);
    Tensor device_send = Tensor::from_vector(1, static_cast<std::int64_t>(send.size()), send, gpu);
    Tensor device_recv = Tensor::full(1, total, std::nanf(""), gpu);
    nccl.all_to_all_v(device_send.data(), send_counts, device_recv.data(), recv_counts, DataType::float32);
    CHECK(device_recv.to_vector() == expected);
    std::vector<float> host_recv(static_cast<std::size_t>(total), std::nanf(""));
    nccl.all_to_all_v(send.data(), send_counts, host_recv.data(), recv_counts, DataType::float32);
    CHECK(host_recv == expected);
  }
  SECTION("broadcast from the last rank; barrier") {
    std::vector<float> mine = random_floats(static_cast<std::uint64_t>(r) + 50, 300);
    std::vector<float> expected = mine;
    world.broadcast(expected.data(), 300, DataType::float32, p - 1);
    Tensor device = Tensor::from_vector(1, 300, mine, gpu);
    nccl.broadcast(device.data(), 300, DataType::float32, p - 1);
    CHECK(device.to_vector() == expected);
    CHECK_NOTHROW(nccl.barrier());
  }
}

TEST_CASE("GCN and GraphSAGE trained on the world's parts over NCCL give the single-GPU run's losses", "[gpu]") {
  Communicator& world = test::mpi_world();
  Device gpu;
  if (!rank_gpu(gpu)) return;
  const datasets::Dataset ds = test::world_sbm();
  const std::string parts = test::partition_for_world(ds, "nccl-training", partition::Method::random);
  NcclCommunicator nccl(world, gpu);
  for (const std::string kind : {"gcn", "sage"}) {
    INFO(kind << " on " << world.size() << " GPUs");
    train::ModelConfig m;
    m.kind = kind;
    m.hidden = 16;
    m.dropout = 0.5f;
    m.input_dropout = 0.5f;
    m.batch_norm = true;
    m.weight_decay = 5e-4f;
    train::TrainConfig c;
    c.epochs = 20;
    c.optimizer.lr = 0.01f;
    c.seed = 3;
    c.device = gpu;
    const train::TrainSummary one = train::train(ds, m, c);
    const train::TrainSummary many = train::train(parts, nccl, m, c);
    CHECK(many.runs.at(0).epochs.size() == one.runs.at(0).epochs.size());
    double worst = 0.0;
    const std::size_t epochs = std::min(one.runs[0].epochs.size(), many.runs[0].epochs.size());
    for (std::size_t e = 0; e < epochs; ++e) {
      const double a = one.runs[0].epochs[e].loss;
      worst = std::max(worst, std::abs(many.runs[0].epochs[e].loss - a) / std::abs(a));
    }
    CAPTURE(worst);
    CHECK(worst < 1e-4);
    CHECK(many.device == gpu);
  }
}

TEST_CASE("A multi-label task trained on the world's parts over NCCL gives the single-GPU run's losses and ROC-AUC",
          "[gpu]") {
  Communicator& world = test::mpi_world();
  Device gpu;
  if (!rank_gpu(gpu)) return;
  const datasets::Dataset ds = test::multilabel_sbm(5);
  const std::string parts = test::partition_for_world(ds, "nccl-multilabel", partition::Method::random);
  NcclCommunicator nccl(world, gpu);
  train::ModelConfig m;
  m.kind = "gcn";
  m.hidden = 16;
  train::TrainConfig c;
  c.epochs = 15;
  c.eval_every = 5;
  c.optimizer.lr = 0.01f;
  c.seed = 3;
  c.device = gpu;
  const train::TrainSummary one = train::train(ds, m, c);
  const train::TrainSummary many = train::train(parts, nccl, m, c);
  CHECK(many.metric == "rocauc");
  REQUIRE(many.runs.at(0).epochs.size() == one.runs.at(0).epochs.size());
  for (std::size_t e = 0; e < one.runs[0].epochs.size(); ++e) {
    const train::EpochRecord& a = one.runs[0].epochs[e];
    const train::EpochRecord& b = many.runs[0].epochs[e];
    CHECK(b.loss == Approx(a.loss).epsilon(1e-4));
    // The scores are gathered to every rank through staged host buffers; rounding may swap a pair.
    if (a.evaluated) CHECK(b.test_acc == Approx(a.test_acc).margin(1e-3));
  }
}

TEST_CASE("A rank behind a GPU collective its peers skip reads past it once its watchdog aborts and then throws",
          "[gpu]") {
  Communicator& world = test::mpi_world();
  Device gpu;
  if (!rank_gpu(gpu)) return;
  if (world.size() < 2) {
    WARN("skipped: needs 2 ranks or more");
    return;
  }
  constexpr double timeout_s = 2.0;
  NcclCommunicator nccl(world, gpu, timeout_s);
  Tensor values = Tensor::full(1, 1000, 1.0f, gpu);
  nccl.all_reduce(values.data(), 1000, DataType::float32);  // every rank: the connections are made
  CHECK(values.to_vector() == std::vector<float>(1000, static_cast<float>(world.size())));
  if (world.rank() == 0) {
    // Queued on the GPU, then read on the host: a wait inside CUDA that only the watchdog's abort
    // ends, since the other ranks never join this all-reduce.
    const auto start = std::chrono::steady_clock::now();
    nccl.all_reduce(values.data(), 1000, DataType::float32);
    static_cast<void>(values.to_vector());
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(waited >= timeout_s);
    CHECK(waited < timeout_s + 20.0);
    CHECK_THROWS_WITH(nccl.barrier(), Catch::Contains("aborted by its watchdog") && Catch::Contains("all_reduce"));
  }
  world.barrier();
  if (world.rank() > 0) {
    // Their peer's communicator is gone: their next collective stalls too, and ends in CommError
    // (the host's own wait or the watchdog, whichever sees it first).
    nccl.all_reduce(values.data(), 1000, DataType::float32);
    static_cast<void>(values.to_vector());
    CHECK_THROWS_AS(nccl.barrier(), CommError);
  }
}
