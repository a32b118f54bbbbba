// exp for float32 as branch-free arithmetic the compiler vectorizes (glibc's expf is a call
// per element, several times slower than numpy's SIMD exp). Accurate to about 1 ulp over the
// whole range, including subnormal results, overflow to inf, underflow to 0 and NaN.
//
// Internal linkage on purpose: the file is compiled both for the baseline ISA and, in
// exp_avx2.cpp, for AVX2; each translation unit must keep its own copy so the linker never
// merges an AVX2 body into baseline code.
#pragma once

#include <cstdint>
#include <limits>

namespace op::native::cpu {
namespace {

// exp(x) = 2^k * e^r with k = round(x / ln 2) and |r| <= ln(2) / 2; e^r from a degree-6
// polynomial (Cephes' expf coefficients), 2^k assembled in two halves so that k down to
// -150 (subnormal results) stays exact.
inline float vec_expf(float x) {
  const float kMax = 88.72283935546875f;    // above: inf
  const float kMin = -103.97208404541015f;  // below: 0
  const float clamped = x < kMin ? kMin : (x > kMax ? kMax : x);
  const float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float k = (clamped * 1.44269504088896341f + kRound) - kRound;
  const float r = (clamped - k * 0.693359375f) - k * -2.12194440e-4f;  // ln 2 in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = (p * r) * r + r + 1.0f;
  const int32_t ki = static_cast<int32_t>(k);
  const int32_t k1 = ki >> 1, k2 = ki - k1;
  const float s1 = __builtin_bit_cast(float, (k1 + 127) << 23);
  const float s2 = __builtin_bit_cast(float, (k2 + 127) << 23);
  float y = er * s1 * s2;
  y = x > kMax ? std::numeric_limits<float>::infinity() : y;
  y = x < kMin ? 0.0f : y;
  return x != x ? x : y;
}

// A contiguous row; the loop vectorizes under the kernel files' optimize pragma.
inline void vec_expf_row(float* out, const float* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = vec_expf(in[i]);
}

}  // namespace
}  // namespace op::native::cpu
