// Out-of-line parts of the halo exception family.
#include "graph/base/error.hpp"

#include <utility>

namespace halo {

IoError::IoError(std::string file, std::int64_t line, const std::string& message)
    : Error(line > 0 ? file + ":" + std::to_string(line) + ": " + message : file + ": " + message),
      file_(std::move(file)),
      line_(line) {}

namespace detail {

void throw_expects_failure(const char* condition, const std::string& message,
                           const char* function) {
  (void)condition;
  throw InvalidArgument(std::string(function) + ": " + message);
}

void throw_assert_failure(const char* condition, const char* file, int line) {
  throw Error(std::string("internal error (halo bug): ") + condition + " failed at " + file + ":" +
              std::to_string(line));
}

}  // namespace detail
}  // namespace halo
