// GPU tests of kernels/cuda/memory.cu and the allocations outside the pool: memory the pool keeps
// after a free is handed back to the driver when a plain cudaMalloc (a streaming slot) needs it.
#include <catch2/catch.hpp>
#include <cstddef>
#include <memory>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/cuda/memory.hpp"
#include "kernels/cuda/staging_copies.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

// The pool and cudaMalloc exist only in a build with CUDA (kernels/cuda/memory.hpp has no stand-ins).
#ifdef HALO_WITH_CUDA
TEST_CASE("a slot outside the pool gets memory the pool kept after a free", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  constexpr std::size_t gib = std::size_t{1} << 30;
  // Fill the GPU through the pool, 1 GiB at a time, until the pool (after its own trim and retry)
  // has nothing more; then free it all: the pool keeps the blocks (its threshold never returns them).
  std::vector<void*> blocks;
  while (true) {
    try {
      blocks.push_back(cuda::allocate(0, gib));
    } catch (const CudaError&) {
      break;
    }
  }
  REQUIRE(blocks.size() >= 4);
  for (void* b : blocks) cuda::release(0, b);
  cuda::synchronize(0);
  // Two GiB only fit once the pool has handed its blocks back to the driver.
  std::unique_ptr<cuda::StagingCopies> slots;
  REQUIRE_NOTHROW(slots = std::make_unique<cuda::StagingCopies>(0, 1, 2 * gib));
  CHECK(slots->device_buffer(0) != nullptr);
  slots.reset();
  // The pool serves again afterwards.
  void* again = nullptr;
  REQUIRE_NOTHROW(again = cuda::allocate(0, gib));
  cuda::release(0, again);
  cuda::synchronize(0);
}
#endif  // HALO_WITH_CUDA
