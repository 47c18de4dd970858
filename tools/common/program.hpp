// What every halo program shares: the error-to-exit-code contract (exit 0 on success, non-zero
// with a one-line reason on stderr otherwise), logging to stderr, --json output, and the
// process's own resource figures for its summaries.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace halo::tools {

// Runs `body` and returns its exit code; any exception becomes "PROGRAM: error: WHAT" on stderr
// and exit code 1.
int run_program(const std::string& program, const std::function<int()>& body);

// Routes the library's log messages to stderr: progress and stage messages unless `quiet`,
// debug messages too when `verbose`.
void configure_logging(bool quiet, bool verbose);

// Writes `summary` as indented JSON to `target`: "-" is stdout; a file is written to a temporary
// name and renamed, so a reader never sees half a summary.
void write_json(const std::string& target, const nlohmann::json& summary);

// "1.5 GiB", "312 KiB", "17 B".
std::string human_bytes(std::uint64_t bytes);

// The process's peak resident memory so far (VmHWM of /proc/self/status), in bytes; 0 when unknown.
std::uint64_t peak_memory_bytes();

// CPU time the process has used so far, all threads, user and system (getrusage).
double cpu_seconds();

// Wall-clock seconds since `start` (steady clock).
double seconds_since(std::chrono::steady_clock::time_point start);

}  // namespace halo::tools
