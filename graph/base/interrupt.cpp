// The process-wide stop request behind halo::request_stop.
#include "graph/base/interrupt.hpp"

#include <atomic>
#include <csignal>

namespace halo {
namespace {

std::atomic<int> requested{0};
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler may only store to a lock-free atomic");

}  // namespace

void request_stop(int signal) noexcept {
  int none = 0;
  requested.compare_exchange_strong(none, signal);
}

int stop_signal() noexcept { return requested.load(std::memory_order_relaxed); }

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

}  // namespace halo
