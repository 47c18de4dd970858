// SIGINT and SIGTERM as a long-running program takes them: the first asks the work to stop at the
// next clean point (halo::request_stop; the training loop ends the epoch, saves a checkpoint and
// throws halo::Interrupted), the second ends the process at once, as the signal would by default.
#pragma once

#include <string>

namespace halo::tools {

// Installs the handlers; `notice` is printed on stderr when the first signal arrives
// ("halo-train: stopping after this epoch; ...").
void stop_cleanly_on_signals(const std::string& notice);

}  // namespace halo::tools
