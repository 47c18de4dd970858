// exp and expm1 in float and double as straight-line arithmetic that the compiler vectorises
// (libm's are calls per value, which it cannot), for the CPU kernels' loops over many values (the
// attention softmax, ELU, the loss's log-softmax). x = n · ln 2 + r with n = round(x / ln 2) and
// |r| <= ln 2 / 2, e^r - 1 by its Taylor polynomial (degree 7 in float, 13 in double: the first
// term left out is below 6e-8, resp. 5e-18, relative even to e^r - 1), 2^n from the exponent
// bits. n is rounded by adding 1.5 · 2^23 (2^52 in double), which leaves n in the low bits of the
// sum. Inputs are clamped to [-87, 88] in float ([-708, 709] in double), where every result is a
// normal number; NaN stays NaN. Measured in float: at most 1.4 ulp from the exact values over the
// whole range, expm1 near 0 included (tests/kernels/vector_exp_test.cpp). expm1 keeps its relative
// accuracy near 0 because it is 2^n · q + (2^n - 1) with q = e^r - 1, which is q itself there.
// Loops over them vectorise where compiled with -fno-trapping-math (kernels/CMakeLists.txt sets
// it for the kernels library).
#pragma once

#include <cstdint>
#include <cstring>

namespace halo::kernels::cpu {
namespace exp_steps {

template <class T>
struct Format;
template <>
struct Format<float> {
  using Bits = std::uint32_t;
  static constexpr int degree = 7;
  static constexpr float lowest = -87.0f, highest = 88.0f;
  static constexpr float round_shift = 12582912.0f;  // 1.5 · 2^23
  static constexpr float log2e = 1.44269504088896341f;
  // ln 2 in two parts (Cody and Waite): n · ln2_hi is exact for the clamped n.
  static constexpr float ln2_hi = 0.693145751953125f, ln2_lo = 1.42860682030941723e-6f;
  static constexpr int exponent_bias = 127, mantissa_bits = 23;
};
template <>
struct Format<double> {
  using Bits = std::uint64_t;
  static constexpr int degree = 13;
  static constexpr double lowest = -708.0, highest = 709.0;
  static constexpr double round_shift = 6755399441055744.0;  // 1.5 · 2^52
  static constexpr double log2e = 1.4426950408889634074;
  static constexpr double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  static constexpr int exponent_bias = 1023, mantissa_bits = 52;
};

// 1 / k! in T for k = 0 .. degree (k! is exact in double up to 18!).
template <class T>
struct InverseFactorials {
  T value[Format<T>::degree + 1];
  constexpr InverseFactorials() : value() {
    double factorial = 1.0;
    for (int k = 0; k <= Format<T>::degree; ++k) {
      if (k > 1) factorial *= k;
      value[k] = static_cast<T>(1.0 / factorial);
    }
  }
};
template <class T>
constexpr InverseFactorials<T> inverse_factorials{};

// Returns r and sets two_n = 2^n.
template <class T>
inline __attribute__((always_inline)) T reduce_argument(T x, T& two_n) {
  using F = Format<T>;
  x = x < F::lowest ? F::lowest : x;  // compares false for NaN, which then propagates
  x = x > F::highest ? F::highest : x;
  const T shifted = x * F::log2e + F::round_shift;
  const T n = shifted - F::round_shift;
  const T r = (x - n * F::ln2_hi) - n * F::ln2_lo;
  // bits(shift + n) = bits(shift) + n: the sum has the shift's exponent, so n is the difference
  // of the bit patterns. Unsigned arithmetic: a NaN's garbage bits wrap instead of overflowing
  // (the result is NaN all the same, from r).
  typename F::Bits shifted_bits, shift_bits;
  const T shift = F::round_shift;
  std::memcpy(&shifted_bits, &shifted, sizeof shifted);
  std::memcpy(&shift_bits, &shift, sizeof shift);
  const typename F::Bits bits = (shifted_bits - shift_bits + F::exponent_bias) << F::mantissa_bits;
  std::memcpy(&two_n, &bits, sizeof two_n);
  return r;
}

// e^r - 1 for |r| <= ln 2 / 2, by Horner.
template <class T>
inline __attribute__((always_inline)) T expm1_reduced(T r) {
  constexpr const T* c = inverse_factorials<T>.value;
  T p = c[Format<T>::degree];
  for (int k = Format<T>::degree - 1; k >= 1; --k) p = p * r + c[k];
  return p * r;
}

}  // namespace exp_steps

template <class T>
inline __attribute__((always_inline)) T vector_exp(T x) {
  T two_n;
  const T r = exp_steps::reduce_argument(x, two_n);
  return (exp_steps::expm1_reduced(r) + T{1}) * two_n;
}

template <class T>
inline __attribute__((always_inline)) T vector_expm1(T x) {
  T two_n;
  const T r = exp_steps::reduce_argument(x, two_n);
  return two_n * exp_steps::expm1_reduced(r) + (two_n - T{1});
}

}  // namespace halo::kernels::cpu
