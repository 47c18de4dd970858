// Default thread counts from the affinity mask, the launcher's local size and the idle cores.
#include "graph/base/thread_defaults.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace halo {
namespace {

// The CPU ids of the affinity mask; empty when it cannot be read.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// Per CPU id: {idle ticks (idle + iowait), all ticks}; empty when /proc/stat is unreadable.
struct CpuTicks {
  std::vector<long long> idle, total;
};

CpuTicks read_ticks() {
  CpuTicks t;
  std::ifstream in("/proc/stat");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(3));
    int id = 0;
    fields >> id;
    long long value = 0, idle = 0, total = 0;
    for (int i = 0; fields >> value; ++i) {
      total += value;
      if (i == 3 || i == 4) idle += value;  // idle, iowait
    }
    if (id < 0) continue;
    if (static_cast<std::size_t>(id) >= t.total.size()) {
      t.idle.resize(static_cast<std::size_t>(id) + 1, 0);
      t.total.resize(static_cast<std::size_t>(id) + 1, 0);
    }
    t.idle[static_cast<std::size_t>(id)] = idle;
    t.total[static_cast<std::size_t>(id)] = total;
  }
  return t;
}

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return (end != v && *end == '\0' && n > 0 && n < 1 << 20) ? static_cast<int>(n) : 0;
}

}  // namespace

int cores_allowed() { return std::max<int>(1, static_cast<int>(allowed_cpus().size())); }

int local_ranks_on_node() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const int n = env_int(name); n > 0) return n;
  return 1;
}

namespace {

bool mask_narrower_than_machine(int allowed) {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 && allowed < online;
}

}  // namespace

int processes_sharing_mask() { return mask_narrower_than_machine(cores_allowed()) ? 1 : local_ranks_on_node(); }

double idle_cores(int sample_ms) {
  const std::vector<int> cpus = allowed_cpus();
  const CpuTicks before = read_ticks();
  if (before.total.empty() || cpus.empty()) return -1.0;
  std::this_thread::sleep_for(std::chrono::milliseconds(sample_ms));
  const CpuTicks after = read_ticks();
  double idle = 0.0;
  for (const int c : cpus) {
    const auto i = static_cast<std::size_t>(c);
    if (i >= before.total.size() || i >= after.total.size()) continue;
    const long long total = after.total[i] - before.total[i];
    // A CPU that ticked nothing in the sample (a coarse clock) counts as idle.
    idle += total > 0 ? static_cast<double>(after.idle[i] - before.idle[i]) / static_cast<double>(total) : 1.0;
  }
  return idle;
}

std::string ThreadChoice::describe() const {
  std::string text = fmt::format("{} thread{}: {} core{} allowed{}, {} rank{} on this node", threads,
                                 threads == 1 ? "" : "s", cores_allowed, cores_allowed == 1 ? "" : "s",
                                 bound ? " (bound)" : "", local_ranks, local_ranks == 1 ? "" : "s");
  if (idle_cores >= 0.0) text += fmt::format(", {:.1f} idle", idle_cores);
  return text;
}

ThreadChoice choose_threads() {
  ThreadChoice c;
  c.cores_allowed = cores_allowed();
  c.local_ranks = local_ranks_on_node();
  // A mask narrower than the machine was set for this process (a launcher binding its ranks, or
  // taskset): it is this process's share already. A mask of every CPU is shared by the node's ranks.
  c.bound = mask_narrower_than_machine(c.cores_allowed);
  c.threads = c.bound ? c.cores_allowed : std::max(1, c.cores_allowed / c.local_ranks);
  c.idle_cores = -1.0;
  // Peers of the same job start at the same moment and would read as busy: only a process
  // alone on its node looks at the idle cores.
  if (c.local_ranks == 1 && c.threads > 1) {
    c.idle_cores = idle_cores(100);
    if (c.idle_cores >= 0.0)
      c.threads = std::clamp(static_cast<int>(std::lround(c.idle_cores)), 1, c.threads);
  }
  return c;
}

}  // namespace halo
