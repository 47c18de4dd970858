// The halo exception family and the always-on checks (HALO_EXPECTS, HALO_ASSERT).
// Every error that leaves the library is a halo::Error; messages name the function and give
// the expected and the observed value.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace halo {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A caller passed a value the function does not accept.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// The request is valid but this build or machine cannot serve it (no CUDA, no MPI, ...).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

// Reading or writing a file failed, or its content is malformed. Carries the file and, when
// known, the 1-based line (0 = no line); what() reads "file:line: message".
class IoError : public Error {
 public:
  IoError(std::string file, std::int64_t line, const std::string& message);
  IoError(std::string file, const std::string& message) : IoError(std::move(file), 0, message) {}
  const std::string& file() const { return file_; }
  std::int64_t line() const { return line_; }

 private:
  std::string file_;
  std::int64_t line_;
};

// A CUDA, cuSPARSE, cuBLAS or NCCL call failed.
class CudaError : public Error {
 public:
  using Error::Error;
};

// An allocation failed: the host's (std::bad_alloc, translated where the context is known) or a
// GPU's (cudaErrorMemoryAllocation). what() names the bytes asked for and, in training, the plan.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// A communication call (MPI, NCCL bootstrap, a peer rank) failed.
class CommError : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void throw_expects_failure(const char* condition, const std::string& message,
                                        const char* function);
[[noreturn]] void throw_assert_failure(const char* condition, const char* file, int line);
}  // namespace detail

}  // namespace halo

// Checks a precondition on caller-supplied values; always on. Throws halo::InvalidArgument
// whose message starts with the calling function's name.
#define HALO_EXPECTS(condition, message)                                              \
  do {                                                                                \
    if (!(condition)) ::halo::detail::throw_expects_failure(#condition, (message), __func__); \
  } while (0)

// Checks an internal invariant; always on (the checks are cheap). A failure is a halo bug.
#define HALO_ASSERT(condition)                                                        \
  do {                                                                                \
    if (!(condition)) ::halo::detail::throw_assert_failure(#condition, __FILE__, __LINE__); \
  } while (0)
