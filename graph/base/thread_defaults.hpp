// The default thread count of a process that was not told one: the cores it may run on (its
// affinity mask; when the mask is the whole machine, shared among the ranks of its job on this
// node, the MPI launcher's local size), and, for a process alone on its node, no more than the
// cores that are idle when it starts, so a busy machine is not oversubscribed (OpenMP's
// fork-join then waits on preempted threads).
#pragma once

#include <string>

namespace halo {

struct ThreadChoice {
  int threads = 1;
  int cores_allowed = 1;    // CPUs in the process's affinity mask
  bool bound = false;       // the mask is narrower than the machine's online CPUs
  int local_ranks = 1;      // ranks of this job on this node (1 outside an MPI launcher)
  double idle_cores = 0.0;  // idle CPUs of the mask over a short sample; -1 when not sampled
  std::string describe() const;  // "2 threads: 2 cores allowed, 1 rank on this node, 1.9 idle"
};

// The CPUs this process may run on (sched_getaffinity), at least 1.
int cores_allowed();

// Ranks of this job on this node, from the launcher's environment (Open MPI's
// OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's MPI_LOCALNRANKS); 1 when neither is set.
int local_ranks_on_node();

// The processes that share this one's affinity mask: 1 when the mask is narrower than the
// machine's online CPUs (a launcher or the user bound this process), else the local ranks.
int processes_sharing_mask();

// The idle CPUs among those allowed, from two reads of /proc/stat `sample_ms` apart; -1 when
// /proc/stat cannot be read. Blocks for sample_ms.
double idle_cores(int sample_ms);

// The cores allowed when the mask is narrower than the machine (the launcher or the user bound
// this process: that is its share), else the cores allowed / local ranks (at least 1); a process
// alone on its node then takes at most its idle cores, rounded (at least 1), from a 100 ms sample.
ThreadChoice choose_threads();

}  // namespace halo
