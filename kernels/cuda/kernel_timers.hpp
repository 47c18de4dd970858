// The GPU side of kernels/timing.hpp. Work on a GPU is only queued when a dispatch function
// returns, so a host clock around the call measures the queueing, not the work: a GPU timer is a
// pair of CUDA events recorded on the device's halo stream around the queued work instead. Stopped
// timers are resolved when the totals are read (kernel_times(), at the end of a training step),
// which waits for their events. Plain C++ declarations (kernel_timers.cu; no_cuda_kernel_timers.cpp
// in builds without CUDA).
#pragma once

#include <array>
#include <cstdint>

#include "kernels/timing.hpp"

namespace halo::kernels::cuda {

// Records a start event on GPU `device`'s halo stream; returns the timer's id.
std::int64_t start_kernel_timer(int device);
// Records timer `id`'s stop event, its time to be charged to `family`. Never throws: a timer whose
// event cannot be recorded is dropped.
void stop_kernel_timer(std::int64_t id, KernelFamily family) noexcept;
// The nanoseconds of every stopped timer, per family (indexed by KernelFamily), after waiting for
// their events; those timers are forgotten. Timers still running stay.
std::array<std::int64_t, 3> collect_kernel_timers();
// Forgets every stopped timer without waiting (reset_kernel_times).
void discard_kernel_timers() noexcept;

}  // namespace halo::kernels::cuda
