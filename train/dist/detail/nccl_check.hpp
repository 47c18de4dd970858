// NCCL's side of train/dist/nccl_communicator.cpp: HALO_NCCL_TRY (every NCCL call checked, a
// failure thrown as CommError with NCCL's own text) and the DataType -> ncclDataType_t mapping.
// Includes nccl.h, so only builds with NCCL (HALO_WITH_NCCL) compile it.
#pragma once

#include <nccl.h>

#include <string>

#include "graph/base/error.hpp"
#include "train/dist/communicator.hpp"

namespace halo::train::dist::detail {

[[noreturn]] inline void throw_nccl_error(const char* call, ncclResult_t status, const char* file, int line) {
  throw CommError(std::string(call) + " failed: " + ncclGetErrorString(status) + " (ncclResult_t " +
                  std::to_string(static_cast<int>(status)) + ") at " + file + ":" + std::to_string(line));
}

// The NCCL element type of `type`: the same width and kind (IEEE float32 / float64, int64).
inline ncclDataType_t nccl_data_type(DataType type) {
  switch (type) {
    case DataType::float32: return ncclFloat32;
    case DataType::float64: return ncclFloat64;
    case DataType::int64: return ncclInt64;
  }
  throw InvalidArgument("nccl_data_type: unknown DataType " + std::to_string(static_cast<int>(type)));
}

}  // namespace halo::train::dist::detail

#define HALO_NCCL_TRY(call)                                                                        \
  do {                                                                                             \
    const ncclResult_t halo_nccl_status_ = (call);                                                 \
    if (halo_nccl_status_ != ncclSuccess)                                                          \
      ::halo::train::dist::detail::throw_nccl_error(#call, halo_nccl_status_, __FILE__, __LINE__); \
  } while (0)
