// Bulk widening of 16-bit floats: the F16C instruction (8 values at a time) where the CPU has it,
// chosen at run time so the default build runs on any x86-64; bfloat16 is a shift either way.
#include "graph/base/half.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace halo {
namespace {

void widen_float16_scalar(const std::uint16_t* in, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = float16_to_float(in[i]);
}

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void widen_float16_f16c(const std::uint16_t* in, float* out, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(halves));
  }
  widen_float16_scalar(in + i, out + i, n - i);
}

// F16C and AVX in CPUID, and the YMM state saved by the OS (XCR0 bits 1 and 2): read directly,
// since compilers differ in the names __builtin_cpu_supports knows.
bool has_f16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
    const unsigned needed = bit_AVX | bit_OSXSAVE | bit_F16C;
    if ((ecx & needed) != needed) return false;
    unsigned xcr0 = 0, high = 0;
    __asm__("xgetbv" : "=a"(xcr0), "=d"(high) : "c"(0));
    return (xcr0 & 6u) == 6u;
  }();
  return has;
}
#endif

}  // namespace

void widen_halves(HalfFormat format, const std::uint16_t* in, float* out, std::int64_t n) {
  if (format == HalfFormat::bfloat16) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = bfloat16_to_float(in[i]);
    return;
  }
#if defined(__x86_64__)
  if (has_f16c()) {
    widen_float16_f16c(in, out, n);
    return;
  }
#endif
  widen_float16_scalar(in, out, n);
}

}  // namespace halo
