// A stop asked for from outside (SIGINT, SIGTERM): a program's signal handler records it with
// request_stop, long loops look at stop_signal between steps and end cleanly, throwing Interrupted,
// which the program turns into exit code 128 + the signal number.
#pragma once

#include <string>

#include "graph/base/error.hpp"

namespace halo {

// Records that `signal` asked the process to stop; async-signal-safe (one atomic store). The
// first signal recorded is kept.
void request_stop(int signal) noexcept;

// The signal that asked for a stop, 0 when none has.
int stop_signal() noexcept;

// "SIGINT", "SIGTERM", else "signal N".
std::string signal_name(int signal);

// A loop ended early because stop_signal() was set; what() says where it stopped and what was
// kept.
class Interrupted : public Error {
 public:
  Interrupted(int signal, const std::string& what) : Error(what), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

}  // namespace halo
