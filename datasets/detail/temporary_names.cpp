// Temporary names with their maker's host and PID, so that a later run can tell the leftovers of a
// killed process from the work of a live one.
#include "datasets/detail/temporary_names.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <random>

namespace halo::datasets::detail {
namespace {

const std::string& host_name() {
  static const std::string name = [] {
    char text[256] = {};
    if (::gethostname(text, sizeof text - 1) != 0 || text[0] == '\0') return std::string("localhost");
    return std::string(text);
  }();
  return name;
}

bool all_of(const std::string& s, const char* allowed) {
  return !s.empty() && s.find_first_not_of(allowed) == std::string::npos;
}

}  // namespace

std::string temporary_suffix() {
  static thread_local std::mt19937_64 engine{(std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()};
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(engine()));
  return "-" + host_name() + "-" + std::to_string(::getpid()) + "-" + text;
}

TemporaryName parse_temporary_name(const std::string& name, const std::string& base) {
  TemporaryName t;
  const std::string tmp = base + ".tmp-";
  const std::string old = base + ".old-";
  std::string rest;
  if (name.compare(0, tmp.size(), tmp) == 0) {
    t.kind = TemporaryKind::writing;
    rest = name.substr(tmp.size());
  } else if (name.compare(0, old.size(), old) == 0) {
    t.kind = TemporaryKind::replaced;
    rest = name.substr(old.size());
  } else {
    return {};
  }
  // rest = "<host>-<pid>-<hex>"; the host may itself hold '-', so it is read from the right.
  const std::size_t last = rest.rfind('-');
  const std::size_t before = last == std::string::npos || last == 0 ? std::string::npos : rest.rfind('-', last - 1);
  if (before == std::string::npos) return {};
  const std::string hex = rest.substr(last + 1);
  const std::string pid = rest.substr(before + 1, last - before - 1);
  if (hex.size() != 16 || !all_of(hex, "0123456789abcdef") || pid.size() > 9 || !all_of(pid, "0123456789")) return {};
  t.pid = std::stoi(pid);
  t.this_host = rest.substr(0, before) == host_name();
  return t;
}

bool is_abandoned(const TemporaryName& t) {
  if (t.kind == TemporaryKind::none || !t.this_host || t.pid <= 0 || t.pid == ::getpid()) return false;
  return ::kill(t.pid, 0) != 0 && errno == ESRCH;
}

}  // namespace halo::datasets::detail
