// HALO_HOST_DEVICE marks inline functions that CUDA device code calls too (compiled by nvcc as
// __host__ __device__), so the CPU and GPU twins of a kernel share one definition of their maths.
#pragma once

#if defined(__CUDACC__)
#define HALO_HOST_DEVICE __host__ __device__
#else
#define HALO_HOST_DEVICE
#endif
