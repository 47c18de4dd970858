// NCCL availability for the [gpu] tests that need the NCCL communicator: where this build has no
// NCCL they skip with a warning (HALO_SKIP_WITHOUT_NCCL), or fail with HALO_REQUIRE_GPU=1, as
// tests/support/gpu.hpp does for a missing GPU.
#pragma once

#include <catch2/catch.hpp>

#include "tests/support/gpu.hpp"
#include "train/dist/nccl_communicator.hpp"

// A statement of a [gpu] test case, after HALO_SKIP_WITHOUT_GPU: returns (after a warning) when
// this build has no NCCL.
#define HALO_SKIP_WITHOUT_NCCL()                                                           \
  do {                                                                                     \
    if (!::halo::train::dist::nccl_available()) {                                          \
      if (::halo::test::gpu_required()) FAIL("HALO_REQUIRE_GPU=1, but this build has no NCCL"); \
      HALO_SKIP("this build has no NCCL");                                                 \
    }                                                                                      \
  } while (0)
