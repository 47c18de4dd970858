// This CPU's vector instruction sets, and the OpenBLAS core that fits them when OpenBLAS fell back
// to Prescott (blas_kernels.hpp). blas_core() and blas_config() live beside the GEMM they describe
// (cpu/gemm.cpp, cpu/gemm_portable.cpp).
#include "kernels/blas_kernels.hpp"

#include <strings.h>

#include <cstdlib>

namespace halo::kernels {

CpuVectorIsa cpu_vector_isa() {
  CpuVectorIsa isa;
#if defined(__x86_64__) && defined(__GNUC__)
  // libgcc's checks read cpuid and XCR0: a set the OS has not enabled (its registers not saved on
  // a context switch) counts as absent, so a core chosen from these never faults.
  __builtin_cpu_init();
  isa.avx = __builtin_cpu_supports("avx");
  isa.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  isa.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
  isa.avx512_bf16 = isa.avx512 && __builtin_cpu_supports("avx512bf16");
#endif
  return isa;
}

std::string fitting_blas_core(const std::string& chosen, const CpuVectorIsa& isa, bool forced) {
  if (forced || strcasecmp(chosen.c_str(), "Prescott") != 0) return "";
  if (isa.avx512_bf16) return "Cooperlake";
  if (isa.avx512) return "SkylakeX";
  if (isa.avx2_fma) return "Haswell";
  if (isa.avx) return "Sandybridge";
  return "";
}

std::string fitting_blas_core() {
  // OpenBLAS takes an empty OPENBLAS_CORETYPE for none and chooses by itself.
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  return fitting_blas_core(blas_core(), cpu_vector_isa(), forced != nullptr && *forced != '\0');
}

}  // namespace halo::kernels
