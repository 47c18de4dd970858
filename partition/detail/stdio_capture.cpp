// Redirecting descriptors 1 and 2 into an unlinked temporary file around a C library call.
#include "partition/detail/stdio_capture.hpp"

#include <unistd.h>

#include <cstdio>

namespace halo::partition::detail {

StdioCapture::StdioCapture() {
  std::fflush(stdout);
  std::fflush(stderr);
  std::FILE* temporary = std::tmpfile();
  if (temporary == nullptr) return;
  file_ = ::dup(::fileno(temporary));
  std::fclose(temporary);
  saved_out_ = ::dup(STDOUT_FILENO);
  saved_err_ = ::dup(STDERR_FILENO);
  if (file_ < 0 || saved_out_ < 0 || saved_err_ < 0 || ::dup2(file_, STDOUT_FILENO) < 0 || ::dup2(file_, STDERR_FILENO) < 0) {
    finish();
  }
}

StdioCapture::~StdioCapture() { finish(); }

std::string StdioCapture::finish() {
  std::fflush(stdout);
  std::fflush(stderr);
  if (saved_out_ >= 0) ::dup2(saved_out_, STDOUT_FILENO);
  if (saved_err_ >= 0) ::dup2(saved_err_, STDERR_FILENO);
  std::string text;
  if (file_ >= 0) {
    char buffer[4096];
    ::ssize_t n = 0;
    ::off_t offset = 0;
    while ((n = ::pread(file_, buffer, sizeof buffer, offset)) > 0 && text.size() < (1 << 16)) {
      text.append(buffer, static_cast<std::size_t>(n));
      offset += n;
    }
  }
  for (int* fd : {&saved_out_, &saved_err_, &file_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  return text;
}

std::string one_line(const std::string& text, std::size_t limit) {
  std::string out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::size_t b = begin;
    std::size_t e = end;
    while (b < e && (text[b] == ' ' || text[b] == '\t' || text[b] == '\r')) ++b;
    while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\r')) --e;
    if (e > b) out += (out.empty() ? "" : "; ") + text.substr(b, e - b);
    begin = end + 1;
  }
  if (out.size() > limit) out = out.substr(0, limit - 3) + "...";
  return out;
}

}  // namespace halo::partition::detail
