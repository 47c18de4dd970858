// The read roles of threads (thread-local flags) and the one system call that lowers a thread.
#include "datasets/detail/read_priority.hpp"

#include <cerrno>

// Lowering is safe only where the OpenMP workers a read thread starts end with it: GCC's libgomp
// gives each thread that starts a team a pool of its own; clang's libomp returns them to one pool
// the caller's teams would reuse, lowered for good.
#if defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define HALO_LOWER_READ_THREADS 1
#else
#define HALO_LOWER_READ_THREADS 0
#endif

#if HALO_LOWER_READ_THREADS
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace halo::datasets::detail {

namespace {

thread_local bool read_thread = false;

}  // namespace

void enter_read_role(ReadRole role) {
  read_thread = true;
  if (role == ReadRole::background) lower_thread_priority();
}

bool in_read_thread() { return read_thread; }

void lower_thread_priority() {
#if HALO_LOWER_READ_THREADS
  // On Linux PRIO_PROCESS with a thread id sets that thread's nice value alone, and with the
  // process id reads the main thread's. The target is 10 above the latter, so a thread that
  // inherited the lowered value stays there instead of sinking further.
  errno = 0;
  const int main_nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::getpid()));
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  const int nice_now = ::getpriority(PRIO_PROCESS, tid);
  const int target = main_nice + 10 > 19 ? 19 : main_nice + 10;
  if (errno == 0 && nice_now < target) ::setpriority(PRIO_PROCESS, tid, target);
#endif
}

}  // namespace halo::datasets::detail
