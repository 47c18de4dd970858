// launched_by_mpi: recognises the environment an MPI launcher gives its ranks.
#include <cstdlib>

#include "train/dist/mpi_communicator.hpp"

namespace halo::train::dist {

bool launched_by_mpi() {
  // Open MPI's mpirun, PMI-based launchers (MPICH's Hydra, Slurm's srun), and PMIx.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

}  // namespace halo::train::dist
