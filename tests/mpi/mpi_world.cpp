// The mpi test binary's main (Catch2 inside an MPI session) and its shared-scratch helpers.
#define CATCH_CONFIG_RUNNER
#include "tests/mpi/mpi_world.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>

#include "datasets/checksum.hpp"
#include "datasets/dataset_dir.hpp"
#include "datasets/synth.hpp"
#include "partition/partition_dir.hpp"
#include "tests/support/test_paths.hpp"
#include "train/dist/mpi_communicator.hpp"

namespace halo::test {
namespace {

train::dist::Communicator* world = nullptr;

}  // namespace

train::dist::Communicator& mpi_world() { return *world; }

std::string shared_scratch(const std::string& name) {
  const std::string dir =
      binary_dir() + "/mpi-scratch/np" + std::to_string(mpi_world().size()) + "/" + name;
  mpi_world().barrier();  // no rank still reads what an earlier call left there
  if (mpi_world().rank() == 0) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  mpi_world().barrier();
  return dir;
}

std::string partition_for_world(const datasets::Dataset& ds, const std::string& name, partition::Method method) {
  const std::string dir = shared_scratch(name);
  const std::string parts = dir + "/parts";
  if (mpi_world().rank() == 0) {
    const std::string dataset = dir + "/dataset";
    datasets::write_dataset_dir(ds, dataset, false);
    partition::PartitionOptions options;
    options.method = method;
    options.num_parts = mpi_world().size();
    partition::PartitionDirWriter writer(parts, false);
    const partition::PartitionInput input = partition::build_partition_input(ds, options);
    const partition::PartitionResult result = partition::partition_vertices(input, options);
    writer.write(ds, {dataset, datasets::file_checksum(dataset + "/dataset.json")}, options, input.balance, result);
  }
  mpi_world().barrier();
  return parts;
}

datasets::Dataset world_sbm() {
  datasets::SbmOptions o;
  o.nodes = 2000;
  o.avg_degree = 8;
  o.features = 32;
  o.classes = 4;
  o.seed = 9;
  return datasets::generate_sbm(o);
}

}  // namespace halo::test

int main(int argc, char** argv) {
  halo::train::dist::MpiSession session;
  auto comm = std::make_unique<halo::train::dist::MpiCommunicator>(session);
  halo::test::world = comm.get();
  const int failed = Catch::Session().run(argc, argv);
  // The job fails when any rank saw a failure.
  const auto any = halo::train::dist::all_reduce_value(*comm, static_cast<std::int64_t>(failed != 0));
  comm.reset();
  return any > 0 ? 1 : 0;
}
