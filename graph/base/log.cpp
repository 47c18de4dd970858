// The logger's state: one sink and one level behind a mutex.
#include "graph/base/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace halo {
namespace {

std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}
LogSink& sink() {
  static LogSink s;
  return s;
}
std::atomic<int> min_level{static_cast<int>(LogLevel::off)};

}  // namespace

void set_log_sink(LogSink new_sink, LogLevel level) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  const bool has_sink = static_cast<bool>(new_sink);
  sink() = std::move(new_sink);
  min_level.store(has_sink ? static_cast<int>(level) : static_cast<int>(LogLevel::off));
}

bool log_enabled(LogLevel level) {
  return level != LogLevel::off && static_cast<int>(level) >= min_level.load();
}

void log(LogLevel level, const std::string& message) {
  if (!log_enabled(level)) return;
  std::lock_guard<std::mutex> lock(sink_mutex());
  if (sink()) sink()(level, message);
}

void log_to_stderr(LogLevel level, const std::string& message) {
  const char* tag = level == LogLevel::warning ? "warning: " : level == LogLevel::error ? "error: " : "";
  std::fprintf(stderr, "[halo] %s%s\n", tag, message.c_str());
  std::fflush(stderr);
}

}  // namespace halo
