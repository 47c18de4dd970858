// NCCL availability for the [gpu] tests that need the NCCL communicator: where this build has no
// NCCL they skip with a warning (HALO_SKIP_WITHOUT_NCCL), even with HALO_REQUIRE_GPU=1: a GPU
// machine without NCCL (tools/device-check.sh then builds without it and says so in its JSON)
// still checks everything else.
#pragma once

#include <catch2/catch.hpp>

#include "tests/support/gpu.hpp"
#include "train/dist/nccl_communicator.hpp"

// A statement of a [gpu] test case, after HALO_SKIP_WITHOUT_GPU: returns (after a warning) when
// this build has no NCCL.
#define HALO_SKIP_WITHOUT_NCCL()                                                                  \
  do {                                                                                            \
    if (!::halo::train::dist::nccl_available()) HALO_SKIP("this build has no NCCL");              \
  } while (0)
