// The leftovers of a killed writer, made by hand: temporaries named as crash-safe output names
// them ("DST.tmp-<host>-<pid>-<hex>", "DST.old-<host>-<pid>-<hex>"), carrying the PID of a process
// that has ended (or of one that runs, or another host's name).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace halo::test {

// The PID of a child that has exited and been reaped: no process has it (until the kernel hands
// it out again, far later).
inline int ended_process_id() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return static_cast<int>(child);
}

inline std::string this_host() {
  char text[256] = {};
  ::gethostname(text, sizeof text - 1);
  return text[0] == '\0' ? std::string("localhost") : std::string(text);
}

// `kind` is "tmp" (being written) or "old" (moved aside by a replacement).
inline std::string temporary_name(const std::string& destination, const std::string& kind, int pid,
                                  const std::string& host = this_host()) {
  return destination + "." + kind + "-" + host + "-" + std::to_string(pid) + "-0123456789abcdef";
}

}  // namespace halo::test
