// Runs CUDA kernel code on the CPU, for tests of kernels on a machine without a GPU: launch() runs
// every thread of a block as a fiber (ucontext), the lanes taking turns at each warp-wide call
// (__syncwarp, __shfl_sync, __shfl_xor_sync), so warp-synchronous code runs as written, and
// __shared__ memory is one copy that a block's threads share (blocks run one after another). It
// refuses what a GPU would not forgive or would hang on: lanes of a call's mask (the warp, or a
// group of it) that do not reach the same warp-wide calls with that mask (one returns, or stops at
// another call, while the others wait), a mask without the calling lane, a shuffle reading a lane
// outside its mask; and it can run the lanes in either order between those calls, which tells a
// race on shared memory by a result that depends on the order. Include it before the kernel
// headers: it defines the CUDA qualifiers and the built-ins they use (threadIdx, blockIdx,
// blockDim, gridDim, the shuffles, __syncwarp, __ldg, float4); only device code that needs nothing
// else compiles against it (no __syncthreads, atomics or intrinsics beyond those). The host
// compiler warns of nvcc's `#pragma unroll` unless told not to (-Wno-unknown-pragmas on the
// test's source).
#pragma once

#include <ucontext.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#endif

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#define threadIdx (::halo::test::cuda_emulator::thread_index())
#define blockIdx (::halo::test::cuda_emulator::current().block_index)
#define blockDim (::halo::test::cuda_emulator::current().block)
#define gridDim (::halo::test::cuda_emulator::current().grid)

namespace halo::test::cuda_emulator {

struct Dim3 {
  unsigned int x = 1, y = 1, z = 1;
};

constexpr std::size_t lane_stack_bytes = std::size_t{256} << 10;

struct Lane {
  ucontext_t context{};
  std::unique_ptr<char[]> stack{new char[lane_stack_bytes]};  // not cleared: it is a stack
  std::uint64_t calls = 0;                                    // warp-wide calls reached so far
  const char* waiting_at = "";                                // the call it waits at
  unsigned int mask = 0;                                      // and that call's mask of lanes
  bool done = false;                                          // returned from the kernel
};

// One launch: its shape, the block running now and its lanes, each warp's shuffle slots.
struct Launch {
  Dim3 grid, block, block_index;
  bool reversed = false;      // each round runs the block's threads last to first
  unsigned int current = 0;   // the thread of the block running now
  unsigned int position = 0;  // and its place in the round
  std::vector<Lane> lanes;
  std::vector<std::array<std::uint64_t, 64>> exchange;  // per warp: two sets of 32 slots
  ucontext_t scheduler{};                               // launch()'s own context, on the calling thread's stack
  const void* scheduler_stack = nullptr;                // and that stack, told to AddressSanitizer
  std::size_t scheduler_stack_bytes = 0;
  std::function<void()> body;
  std::string error;  // why a lane stopped the launch ("" while none did)
};

inline Launch* running = nullptr;

inline Launch& current() {
  if (running == nullptr) throw std::logic_error("cuda_emulator: a kernel built-in was used outside launch()");
  return *running;
}

inline Dim3 thread_index() { return {current().current, 0, 0}; }

// Switches from context `from` to `to`, whose stack is [stack, stack + bytes), telling
// AddressSanitizer where the stack goes (`exiting`: `from` is never resumed). Not inlined, so that
// no caller keeps a variable in a register across a switch.
[[gnu::noinline]] inline void switch_context(ucontext_t* from, ucontext_t* to, [[maybe_unused]] const void* stack,
                                             [[maybe_unused]] std::size_t bytes, [[maybe_unused]] bool exiting) {
#if defined(__SANITIZE_ADDRESS__)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(exiting ? nullptr : &fake_stack, stack, bytes);
  swapcontext(from, to);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#else
  swapcontext(from, to);
#endif
}

// The thread a round runs at `position` (0 first): the threads in order, or reversed.
inline unsigned int thread_at(const Launch& l, unsigned int position) {
  return l.reversed ? l.block.x - 1 - position : position;
}

// The first position from `position` on whose thread has not returned (block.x if none).
inline unsigned int next_running(const Launch& l, unsigned int position) {
  while (position < l.block.x && l.lanes[thread_at(l, position)].done) ++position;
  return position;
}

// Hands over from the lane running now to the round's next lane that has not returned, or after
// the last one (or once a lane has failed) to the scheduler: a round of the block's lanes ends at
// the scheduler, which checks the warps before the next.
inline void yield_lane(bool exiting) {
  Launch& l = current();
  Lane& me = l.lanes[l.current];
  const unsigned int next = next_running(l, l.position + 1);
  if (next < l.block.x && l.error.empty()) {
    l.position = next;
    l.current = thread_at(l, next);
    switch_context(&me.context, &l.lanes[l.current].context, l.lanes[l.current].stack.get(), lane_stack_bytes, exiting);
  } else {
    switch_context(&me.context, &l.scheduler, l.scheduler_stack, l.scheduler_stack_bytes, exiting);
  }
}

// One round from the scheduler: every lane that has not returned runs to its next warp-wide call
// (or returns), one after another in the launch's order.
inline void run_round(Launch& l) {
  const unsigned int first = next_running(l, 0);
  if (first == l.block.x) return;
  l.position = first;
  l.current = thread_at(l, first);
  switch_context(&l.scheduler, &l.lanes[l.current].context, l.lanes[l.current].stack.get(), lane_stack_bytes, false);
}

inline void lane_entry() {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
  current().body();
  current().lanes[current().current].done = true;
  yield_lane(true);
}

// Stops the launch from the lane running now (an exception cannot leave a fiber): launch()
// throws std::logic_error saying `call` `why`. Takes no std::string: one built by the caller
// would stay on the fiber's stack, never destroyed.
[[noreturn]] inline void fail(const char* call, const char* why) {
  current().error = std::string("cuda_emulator: ") + call + " " + why;
  yield_lane(true);
  std::abort();  // never resumed
}

inline bool in_mask(unsigned int mask, unsigned int lane) { return ((mask >> lane) & 1u) != 0; }

// A warp-wide call of the lane running now over the lanes of `mask` (the whole warp or a group of
// it): it waits until every lane of the mask has reached one with the same mask.
inline void warp_call(const char* name, unsigned int mask) {
  Launch& l = current();
  if (!in_mask(mask, l.current % 32)) fail(name, "with a mask that leaves out the calling lane");
  Lane& me = l.lanes[l.current];
  me.waiting_at = name;
  me.mask = mask;
  ++me.calls;
  yield_lane(false);
}

// Lane `lane` of the warp of the thread running now writes `value` to its slot of the call's set,
// waits for the warp, and reads the slot of lane `source`.
template <class T>
T exchange(const char* name, unsigned int mask, T value, unsigned int source) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(std::uint64_t), "a shuffle moves 8 bytes");
  Launch& l = current();
  const unsigned int lane = l.current % 32, warp = l.current / 32;
  if (!in_mask(mask, source % 32)) fail(name, "reading a lane outside its mask");
  // Two sets of slots, a call's set by its number: a lane writes the next call's set only once
  // the warp has reached this one, so no slot is written before its last reader has read it.
  const std::size_t set = 32 * (l.lanes[l.current].calls % 2);
  std::memcpy(&l.exchange[warp][set + lane], &value, sizeof(T));
  warp_call(name, mask);
  T out;
  std::memcpy(&out, &l.exchange[warp][set + source % 32], sizeof(T));
  return out;
}

// Makes `lane` start the kernel at its next switch.
[[gnu::noinline]] inline void prepare_lane(Lane& lane) {
  lane.calls = 0;
  lane.waiting_at = "";
  lane.done = false;
  if (getcontext(&lane.context) != 0) throw std::runtime_error("cuda_emulator: getcontext failed");
  lane.context.uc_stack.ss_sp = lane.stack.get();
  lane.context.uc_stack.ss_size = lane_stack_bytes;
  lane.context.uc_link = nullptr;
  makecontext(&lane.context, lane_entry, 0);
}

// Why the lanes of warp `w` of the block cannot go on together ("" when they can): a lane waits at
// a call whose mask holds a lane that returned, or that waits at another call or with another mask.
inline std::string divergence(const Launch& l, unsigned int w) {
  const auto where = [](const Lane& x) {
    char mask[16];
    std::snprintf(mask, sizeof mask, "%08x", x.mask);
    return x.done
               ? std::string("returned")
               : "waits at warp-wide call " + std::to_string(x.calls) + " (" + x.waiting_at + ", mask 0x" + mask + ")";
  };
  for (unsigned int t = 32 * w; t < 32 * (w + 1); ++t) {
    const Lane& lane = l.lanes[t];
    if (lane.done) continue;
    for (unsigned int u = 32 * w; u < 32 * (w + 1); ++u) {
      const Lane& other = l.lanes[u];
      if (!in_mask(lane.mask, u % 32)) continue;
      if (!other.done && other.calls == lane.calls && other.mask == lane.mask &&
          std::strcmp(other.waiting_at, lane.waiting_at) == 0)
        continue;
      return "block (" + std::to_string(l.block_index.x) + ", " + std::to_string(l.block_index.y) + "), warp " +
             std::to_string(w) + ": lane " + std::to_string(t % 32) + " " + where(lane) + ", lane " +
             std::to_string(u % 32) + " " + where(other);
    }
  }
  return "";
}

// A launch's grid and block sizes (block a multiple of 32), and the order in which each round
// runs the block's threads: between two warp-wide calls a lane runs alone, so code whose result
// depends on that order (a lane reading shared memory another writes without a __syncwarp
// between them: a race on a GPU) gives different results in the two orders.
struct LaunchShape {
  unsigned int grid;
  unsigned int block;
  bool reversed = false;
  unsigned int grid_y = 1;  // blockIdx.y's extent
};

// Runs kernel(args...) on a grid of shape.grid x shape.grid_y blocks of shape.block threads, the
// blocks one after another. Throws std::logic_error where the lanes of a warp diverge at a warp-wide call or a lane
// calls a built-in in a way the emulator refuses.
template <class Kernel, class... Args>
void launch(LaunchShape shape, Kernel kernel, Args... args) {
  const unsigned int grid = shape.grid, block = shape.block;
  if (block == 0 || block % 32 != 0) throw std::logic_error("cuda_emulator: blocks of whole warps only");
  if (running != nullptr) throw std::logic_error("cuda_emulator: launch() from a kernel");
  Launch l;
  l.grid = {grid, shape.grid_y, 1};
  l.block = {block, 1, 1};
  l.reversed = shape.reversed;
  l.lanes.resize(block);
  l.exchange.resize(block / 32);
  l.body = [&] { kernel(args...); };
#if defined(__SANITIZE_ADDRESS__)
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
    void* bottom = nullptr;
    pthread_attr_getstack(&attributes, &bottom, &l.scheduler_stack_bytes);
    l.scheduler_stack = bottom;
    pthread_attr_destroy(&attributes);
  }
#endif
  running = &l;
  struct Reset {
    ~Reset() { running = nullptr; }
  } reset;
  for (unsigned int by = 0; by < shape.grid_y; ++by)
    for (unsigned int bx = 0; bx < grid; ++bx) {
      l.block_index = {bx, by, 0};
      for (Lane& lane : l.lanes) prepare_lane(lane);
      for (bool finished = false; !finished;) {
        run_round(l);
        if (!l.error.empty()) throw std::logic_error(l.error);
        for (unsigned int w = 0; w < block / 32; ++w) {
          const std::string why = divergence(l, w);
          if (!why.empty()) throw std::logic_error("cuda_emulator: the lanes of a warp diverged: " + why);
        }
        finished = std::all_of(l.lanes.begin(), l.lanes.end(), [](const Lane& lane) { return lane.done; });
      }
    }
}

}  // namespace halo::test::cuda_emulator

template <class T>
T __shfl_xor_sync(unsigned int mask, T value, int lane_mask, int width = 32) {
  if (width != 32) halo::test::cuda_emulator::fail("__shfl_xor_sync", "over less than the whole warp");
  const unsigned int lane = halo::test::cuda_emulator::current().current % 32;
  return halo::test::cuda_emulator::exchange("__shfl_xor_sync", mask, value,
                                             lane ^ static_cast<unsigned int>(lane_mask));
}

template <class T>
T __shfl_sync(unsigned int mask, T value, int source_lane, int width = 32) {
  if (width != 32) halo::test::cuda_emulator::fail("__shfl_sync", "over less than the whole warp");
  return halo::test::cuda_emulator::exchange("__shfl_sync", mask, value, static_cast<unsigned int>(source_lane));
}

inline void __syncwarp(unsigned int mask = 0xffffffffu) { halo::test::cuda_emulator::warp_call("__syncwarp", mask); }

template <class T>
T __ldg(const T* p) {
  return *p;
}

struct alignas(16) float4 {
  float x, y, z, w;
};

inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
