// The SIGINT / SIGTERM handlers behind stop_cleanly_on_signals. A handler may only call
// async-signal-safe functions: an atomic store, write(2), sigaction(2) and raise(3).
#include "tools/common/stop_signals.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "graph/base/error.hpp"
#include "graph/base/interrupt.hpp"

namespace halo::tools {
namespace {

char notice_text[512];
std::size_t notice_length = 0;

extern "C" void on_stop_signal(int signal) {
  if (stop_signal() != 0) {  // the second: stop now, as the signal would have
    struct sigaction plain {};
    plain.sa_handler = SIG_DFL;
    ::sigaction(signal, &plain, nullptr);
    ::raise(signal);
    return;
  }
  request_stop(signal);
  static_cast<void>(::write(STDERR_FILENO, notice_text, notice_length));
}

}  // namespace

void stop_cleanly_on_signals(const std::string& notice) {
  const std::string line = notice + "\n";
  notice_length = std::min(line.size(), sizeof notice_text);
  std::memcpy(notice_text, line.data(), notice_length);
  struct sigaction action {};
  action.sa_handler = &on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (const int signal : {SIGINT, SIGTERM}) {
    if (::sigaction(signal, &action, nullptr) != 0)
      throw Error("cannot install the handler of " + signal_name(signal) + ": " + std::strerror(errno));
  }
}

}  // namespace halo::tools
