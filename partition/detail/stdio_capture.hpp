// Captures what a C library prints on the process's stdout and stderr (METIS prints its errors)
// so that the library's own rule holds: nothing is printed unless the caller's logger says so.
#pragma once

#include <string>

namespace halo::partition::detail {

// While alive, file descriptors 1 and 2 point at a temporary file; finish() restores them and
// returns what was written. Process-wide: only for calls made while no other thread prints.
// If the temporary file cannot be made, nothing is captured (finish() returns "").
class StdioCapture {
 public:
  StdioCapture();
  ~StdioCapture();  // restores the descriptors if finish() was not called; never throws
  StdioCapture(const StdioCapture&) = delete;
  StdioCapture& operator=(const StdioCapture&) = delete;

  std::string finish();

 private:
  int saved_out_ = -1;
  int saved_err_ = -1;
  int file_ = -1;
};

// The captured text on one line: lines trimmed, empty ones dropped, joined by "; ", at most
// `limit` characters.
std::string one_line(const std::string& text, std::size_t limit = 400);

}  // namespace halo::partition::detail
