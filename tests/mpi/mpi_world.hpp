// The MPI world of the mpi test binary (run under mpirun -np P) and the shared scratch folders
// its tests write partitions into. Every test case runs on every rank in the same order, so the
// collectives inside them line up; assertions that could differ between ranks use CHECK, never
// REQUIRE, so a failing rank does not leave the others waiting.
#pragma once

#include <string>

#include "datasets/dataset.hpp"
#include "partition/partitioner.hpp"
#include "train/dist/communicator.hpp"

namespace halo::test {

train::dist::Communicator& mpi_world();

// A fresh folder <build>/mpi-scratch/np<P>/<name>, emptied by rank 0; every rank returns after
// it exists (collective).
std::string shared_scratch(const std::string& name);

// Rank 0 writes `ds` as a dataset directory and partitions it into world-size parts with
// `method` (METIS by default); every rank returns the partition directory once it is complete
// (collective).
std::string partition_for_world(const datasets::Dataset& ds, const std::string& name,
                                partition::Method method = partition::Method::metis);

// The SBM graph the homogeneous MPI training tests share: 2,000 vertices of 4 classes, mean degree 8,
// 32 features (seed 9).
datasets::Dataset world_sbm();

}  // namespace halo::test
