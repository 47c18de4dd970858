// The one logger of the library. Library code never prints on its own: it logs here, and the
// caller (a program, a test, an embedding application) decides where messages go. The default
// sink drops everything.
#pragma once

#include <functional>
#include <string>

namespace halo {

enum class LogLevel { debug = 0, info = 1, warning = 2, error = 3, off = 4 };

using LogSink = std::function<void(LogLevel, const std::string&)>;

// Installs the sink and the lowest level passed to it; thread-safe. An empty sink drops all.
void set_log_sink(LogSink sink, LogLevel min_level = LogLevel::info);

// Sends a message to the sink when `level` is at or above the configured minimum; thread-safe.
void log(LogLevel level, const std::string& message);

// True when a message at `level` would reach a sink (use it to skip formatting costs).
bool log_enabled(LogLevel level);

inline void log_info(const std::string& message) { log(LogLevel::info, message); }
inline void log_warning(const std::string& message) { log(LogLevel::warning, message); }
inline void log_debug(const std::string& message) { log(LogLevel::debug, message); }

// Sink used by the command-line programs: "[halo] message" on stderr.
void log_to_stderr(LogLevel level, const std::string& message);

}  // namespace halo
