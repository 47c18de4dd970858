// Which of OpenBLAS's kernel sets ("cores") halo's CPU products run on, and the set this CPU can
// run when OpenBLAS did not recognise it. A DYNAMIC_ARCH OpenBLAS (Debian's) picks its kernels by
// CPU model when it is loaded; a model missing from its table (Debian 12's 0.3.21 lacks Emerald
// Rapids, family 6 model 207) gets its Prescott kernels, SSE3 only: measured on such a Xeon, a
// 1 000 000 x 256 by 256 x 256 product ran at 28 GFLOP/s a core against 122 with the AVX-512
// kernels, and GCN 3 x 256 on a 1 M-vertex graph took 15.7 s an epoch against 8.1 s. OpenBLAS
// takes another set only from OPENBLAS_CORETYPE, read when it is loaded: before main, so a
// program that wants the fitting set restarts itself with it (tools/common/blas_restart.hpp).
#pragma once

#include <string>

namespace halo::kernels {

// The vector instruction sets this CPU has and the operating system lets programs use.
struct CpuVectorIsa {
  bool avx = false;
  bool avx2_fma = false;     // AVX2 and FMA3
  bool avx512 = false;       // AVX-512 F, CD, BW, DQ and VL (Skylake-SP and later)
  bool avx512_bf16 = false;  // AVX-512 BF16 too (Cooper Lake, Sapphire Rapids and later)
};

// This process's CPU (cpuid and the OS's enabled state, through the compiler's cpu-support
// checks). x86-64 only; elsewhere none of them.
CpuVectorIsa cpu_vector_isa();

// The OpenBLAS core halo's products run on, as OpenBLAS names it ("SkylakeX", "Haswell",
// "Prescott", ...); empty in a build without BLAS (kernels/cpu/gemm_portable.cpp).
std::string blas_core();

// OpenBLAS's description of itself (version, DYNAMIC_ARCH, core, threads), or what runs the
// products in a build without BLAS.
std::string blas_config();

// The OpenBLAS core to ask for (OPENBLAS_CORETYPE) so that products use `isa`, when `chosen` is
// Prescott, the set OpenBLAS falls back to for a CPU model it does not know, and `isa` has more:
// "Cooperlake" (AVX-512 with BF16), "SkylakeX" (AVX-512), "Haswell" (AVX2 and FMA) or
// "Sandybridge" (AVX). Empty when the chosen core stands: a known CPU, a core the user forced
// (`forced`: OPENBLAS_CORETYPE set), a CPU that has nothing better, no BLAS.
std::string fitting_blas_core(const std::string& chosen, const CpuVectorIsa& isa, bool forced);

// fitting_blas_core for this process: blas_core(), cpu_vector_isa(), OPENBLAS_CORETYPE.
std::string fitting_blas_core();

}  // namespace halo::kernels
