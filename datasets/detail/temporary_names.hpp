// The names of the temporaries that crash-safe output leaves beside its destination while it
// works ("DST.tmp-<host>-<pid>-<random>" for what is being written, "DST.old-<host>-<pid>-<random>"
// for what it replaces), and the test of whether the process that made one is gone.
#pragma once

#include <string>

namespace halo::datasets::detail {

// "-<host>-<pid>-<16 random hex digits>": unique across hosts sharing a file system, processes and
// calls in one process.
std::string temporary_suffix();

enum class TemporaryKind { none, writing, replaced };

struct TemporaryName {
  TemporaryKind kind = TemporaryKind::none;  // none: not a temporary of `base`
  int pid = 0;
  bool this_host = false;
};

// What `name` (a file name, no folder) is to `base` (its destination's file name):
// base + ".tmp" + suffix is `writing`, base + ".old" + suffix is `replaced`, anything else none.
TemporaryName parse_temporary_name(const std::string& name, const std::string& base);

// True when the temporary was made on this host by a process that no longer runs: only then may it
// be removed (or restored) by another process.
bool is_abandoned(const TemporaryName& t);

}  // namespace halo::datasets::detail
