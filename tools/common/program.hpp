// What every halo program shares: the error-to-exit-code contract (exit 0 on success, non-zero
// with a one-line reason on stderr otherwise), logging to stderr, --json output, and the
// process's own resource figures for its summaries.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
class Validator;
}

namespace halo::tools {

// The exit codes of every halo program (README's table).
constexpr int exit_ok = 0;
constexpr int exit_failure = 1;  // the work failed: bad data, a refused setting, I/O, out of memory
constexpr int exit_usage = 2;    // the command line is wrong: an unknown flag, a missing or bad value

// A check for an output FILE option (--json), run when the command line is parsed, so that a
// path that cannot be written is refused before any work: "-" (stdout), or a file whose folder
// exists and may be written (and which, when it exists, may be replaced).
CLI::Validator writable_output_file();

// Parses the command line into `app`. Returns -1 when the program should go on, else the code to
// exit with: 0 after printing the help (--help), exit_usage after printing
// "PROGRAM: error: WHAT (see --help)" as one line on stderr.
int parse_command_line(CLI::App& app, const std::string& program, int argc, char** argv);

// An error as a program prints it: one line (line breaks become "; "), without the name of the
// library function that raised it ("read_ogb: ", "HeteroModel: ", "dist::x: ").
std::string user_message(const std::string& what);

// Runs `body` and returns its exit code; any exception becomes "PROGRAM: error: WHAT" (WHAT as
// user_message gives it) on stderr and exit_failure, except halo::Interrupted (a stop asked for by
// a signal), which becomes "PROGRAM: stopped: WHAT" and 128 + the signal number (130 for SIGINT,
// 143 for SIGTERM), as a shell reports a process that a signal ended.
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
