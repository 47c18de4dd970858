// Tests of kernels/blas_kernels.*: the OpenBLAS core asked for when OpenBLAS fell back to Prescott's
// kernels is the widest this CPU runs, and none otherwise; this process's CPU and BLAS as found.
#include "kernels/blas_kernels.hpp"

#include <catch2/catch.hpp>

using namespace halo::kernels;

TEST_CASE("fitting_blas_core asks for the widest core the CPU runs, and only in place of Prescott's", "[kernels]") {
  const CpuVectorIsa sse{};
  const CpuVectorIsa avx{true, false, false, false};
  const CpuVectorIsa avx2{true, true, false, false};
  const CpuVectorIsa avx512{true, true, true, false};
  const CpuVectorIsa avx512_bf16{true, true, true, true};
  // OpenBLAS's fallback for a CPU model its table lacks.
  CHECK(fitting_blas_core("Prescott", avx512_bf16, false) == "Cooperlake");
  CHECK(fitting_blas_core("Prescott", avx512, false) == "SkylakeX");
  CHECK(fitting_blas_core("Prescott", avx2, false) == "Haswell");
  CHECK(fitting_blas_core("Prescott", avx, false) == "Sandybridge");
  CHECK(fitting_blas_core("prescott", avx2, false) == "Haswell");
  // A CPU that has nothing better keeps it.
  CHECK(fitting_blas_core("Prescott", sse, false).empty());
  // A core the user forced stands, even Prescott.
  CHECK(fitting_blas_core("Prescott", avx512, true).empty());
  // OpenBLAS's own choice for a CPU it knows stands, whatever more the CPU has.
  CHECK(fitting_blas_core("Haswell", avx512, false).empty());
  CHECK(fitting_blas_core("SkylakeX", avx512_bf16, false).empty());
  CHECK(fitting_blas_core("Zen", avx2, false).empty());
  // No BLAS.
  CHECK(fitting_blas_core("", avx512, false).empty());
}

TEST_CASE("cpu_vector_isa finds nested instruction sets, and blas_core names the build's BLAS", "[kernels]") {
  const CpuVectorIsa isa = cpu_vector_isa();
  if (isa.avx512_bf16) CHECK(isa.avx512);
  if (isa.avx512) CHECK(isa.avx2_fma);
  if (isa.avx2_fma) CHECK(isa.avx);
  const std::string config = blas_config();
  CHECK_FALSE(config.empty());
  // OpenBLAS names its core in its configuration; without BLAS there is none.
  if (config.rfind("OpenBLAS", 0) == 0) {
    CHECK_FALSE(blas_core().empty());
    CHECK(config.find(blas_core()) != std::string::npos);
  } else {
    CHECK(blas_core().empty());
  }
}
