// The shared program contract: exit codes, stderr logging, JSON summaries.
#include "tools/common/program.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cctype>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "graph/base/error.hpp"
#include "graph/base/interrupt.hpp"
#include "graph/base/log.hpp"

namespace halo::tools {

namespace {

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// True for a C++ function or type name as the library prefixes its messages with: a qualified
// name, or one holding an underscore or an inner capital ("read_ogb", "HeteroModel", "a::b"); plain
// words ("acm", "train", "rank 0 of 2") are not.
bool looks_like_code_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0) return false;
  bool code = false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == ':') {
      if (i + 1 >= name.size() || name[i + 1] != ':') return false;
      code = true;
      ++i;
    } else if (!identifier_char(c)) {
      return false;
    } else if (c == '_' || (i > 0 && std::isupper(static_cast<unsigned char>(c)) != 0)) {
      code = true;
    }
  }
  return code;
}

}  // namespace

std::string user_message(const std::string& what) {
  std::string text;
  for (const char c : what) {
    if (c == '\n') {
      if (!text.empty() && text.back() != ' ') text += "; ";
    } else {
      text += c;
    }
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == ';')) text.pop_back();
  const std::size_t colon = text.find(": ");
  if (colon != std::string::npos && looks_like_code_name(text.substr(0, colon))) text.erase(0, colon + 2);
  return text;
}

CLI::Validator writable_output_file() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (path == "-") return std::string();
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec)) return path + " is a folder, not a file";
        const std::filesystem::path folder = std::filesystem::path(path).parent_path();
        const std::string dir = folder.empty() ? std::string(".") : folder.string();
        if (!std::filesystem::is_directory(dir, ec)) return "no folder " + dir + " to write " + path + " in";
        if (access(dir.c_str(), W_OK) != 0) return "cannot write in " + dir;
        if (std::filesystem::exists(path, ec) && access(path.c_str(), W_OK) != 0) return "cannot replace " + path;
        return std::string();
      },
      "FILE");
}

int parse_command_line(CLI::App& app, const std::string& program, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "%s: error: %s (see --help)\n", program.c_str(), user_message(e.what()).c_str());
    return exit_usage;
  }
}

int run_program(const std::string& program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const Interrupted& e) {
    std::fprintf(stderr, "%s: stopped: %s\n", program.c_str(), user_message(e.what()).c_str());
    return 128 + e.signal();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", program.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), user_message(e.what()).c_str());
  }
  return exit_failure;
}

void configure_logging(bool quiet, bool verbose) {
  const LogLevel level = verbose ? LogLevel::debug : quiet ? LogLevel::warning : LogLevel::info;
  set_log_sink(&log_to_stderr, level);
}

void write_json(const std::string& target, const nlohmann::json& summary) {
  const std::string text = summary.dump(2) + "\n";
  if (target == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  const std::string temp = target + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError(temp, "cannot open for writing");
    out << text;
    out.flush();
    if (!out) throw IoError(temp, "write failed");
  }
  if (std::rename(temp.c_str(), target.c_str()) != 0) throw IoError(target, "cannot rename " + temp + " into place");
}

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return text;
}

std::uint64_t peak_memory_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      std::uint64_t kib = 0;
      fields >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

double cpu_seconds() {
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace halo::tools
