// Tests of graph/base/thread_defaults.*: the cores allowed against /proc/self/status, the local
// rank count from each launcher's variable (bad values ignored), the idle cores within their
// bounds, and the choice: the allowed cores shared among the node's ranks, never below one.
#include "graph/base/thread_defaults.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

// The CPUs of "Cpus_allowed_list: 0-3,6" in /proc/self/status, counted from its ranges.
int cpus_in_allowed_list() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Cpus_allowed_list:", 0) != 0) continue;
    std::istringstream ranges(line.substr(line.find(':') + 1));
    std::string range;
    int count = 0;
    while (std::getline(ranges, range, ',')) {
      const std::size_t dash = range.find('-');
      const int first = std::stoi(range.substr(0, dash));
      const int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
      count += last - first + 1;
    }
    return count;
  }
  return -1;
}

// Sets an environment variable for the scope, restoring what it was.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      old_ = old;
      had_ = true;
    }
    if (value != nullptr)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace

TEST_CASE("cores_allowed counts the CPUs of the affinity mask", "[graph]") {
  const int listed = cpus_in_allowed_list();
  REQUIRE(listed > 0);
  CHECK(halo::cores_allowed() == listed);
}

TEST_CASE("local_ranks_on_node reads Open MPI's and MPICH's local size, and ignores bad values", "[graph]") {
  ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_SIZE", nullptr);
  ScopedEnv mpich("MPI_LOCALNRANKS", nullptr);
  CHECK(halo::local_ranks_on_node() == 1);
  {
    ScopedEnv set("OMPI_COMM_WORLD_LOCAL_SIZE", "3");
    CHECK(halo::local_ranks_on_node() == 3);
  }
  {
    ScopedEnv set("MPI_LOCALNRANKS", "5");
    CHECK(halo::local_ranks_on_node() == 5);
  }
  for (const char* bad : {"0", "-2", "x", "4x", ""}) {
    ScopedEnv set("OMPI_COMM_WORLD_LOCAL_SIZE", bad);
    CHECK(halo::local_ranks_on_node() == 1);
  }
}

TEST_CASE("idle_cores lies between none and the cores allowed", "[graph]") {
  const double idle = halo::idle_cores(20);
  CHECK(idle >= 0.0);
  CHECK(idle <= halo::cores_allowed() + 1e-9);
}

TEST_CASE("choose_threads shares the allowed cores among the node's ranks, never below one thread", "[graph]") {
  const int allowed = halo::cores_allowed();
  const bool bound = allowed < sysconf(_SC_NPROCESSORS_ONLN);
  {
    ScopedEnv many("OMPI_COMM_WORLD_LOCAL_SIZE", "4096");
    const halo::ThreadChoice c = halo::choose_threads();
    CHECK(c.local_ranks == 4096);
    CHECK(c.threads == 1);
    CHECK(c.idle_cores < 0.0);  // ranks of one job do not sample each other's load
    CHECK(c.describe().find("4096 ranks on this node") != std::string::npos);
  }
  {
    ScopedEnv two("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
    const halo::ThreadChoice c = halo::choose_threads();
    CHECK(c.threads == (bound ? allowed : std::max(1, allowed / 2)));
  }
  ScopedEnv alone("OMPI_COMM_WORLD_LOCAL_SIZE", nullptr);
  ScopedEnv mpich("MPI_LOCALNRANKS", nullptr);
  const halo::ThreadChoice c = halo::choose_threads();
  CHECK(c.local_ranks == 1);
  CHECK(c.threads >= 1);
  CHECK(c.threads <= allowed);
  CHECK(c.cores_allowed == allowed);
}
