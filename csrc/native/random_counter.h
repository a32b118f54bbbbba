// Counter-based random numbers shared by the CPU and CUDA kernels of uniform_ and normal_.
// Element i of a call draws from counter (offset + i) under key `seed` (see op::Generator),
// so values depend only on the seed and the draw's position, never on threads, launch shape
// or device. The mixing function is Philox-4x32 with 10 rounds (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC'11): a bijection of the 128-bit counter keyed by
// 64 bits, giving four 32-bit words per counter.
#pragma once

#include <math.h>  // the global log/sqrt/cos/nextafter overloads nvcc also provides on the device

#include <cstdint>
#include <type_traits>

#ifndef OP_HOST_DEVICE
#ifdef __CUDACC__
#define OP_HOST_DEVICE __host__ __device__
#else
#define OP_HOST_DEVICE
#endif
#endif

namespace op::native::rng {

struct Words {
  uint32_t w[4];
};

// One Philox round's multiply: the high and low halves of a 32x32-bit product.
OP_HOST_DEVICE inline uint32_t mul_hi_lo(uint32_t a, uint32_t b, uint32_t* lo) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  *lo = static_cast<uint32_t>(product);
  return static_cast<uint32_t>(product >> 32);
}

// The four words for counter `index` under key `seed`.
OP_HOST_DEVICE inline Words philox4x32_10(uint64_t seed, uint64_t index) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;  // key schedule increments
  uint32_t c0 = static_cast<uint32_t>(index), c1 = static_cast<uint32_t>(index >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t lo0, lo1;
    const uint32_t hi0 = mul_hi_lo(kMul0, c0, &lo0);
    const uint32_t hi1 = mul_hi_lo(kMul1, c2, &lo1);
    const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return Words{{c0, c1, c2, c3}};
}

// [0, 1) with a full 53-bit mantissa from two words.
OP_HOST_DEVICE inline double unit_double(uint32_t hi, uint32_t lo) {
  const uint64_t bits = ((static_cast<uint64_t>(hi) << 32) | lo) >> 11;
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);  // 2^-53
}

// [0, 1) with float32's 24-bit mantissa from one word: every value is exact in float.
OP_HOST_DEVICE inline double unit_float(uint32_t word) {
  return static_cast<double>(word >> 8) * (1.0 / 16777216.0);  // 2^-24
}

OP_HOST_DEVICE inline float next_toward(float x, float y) { return nextafterf(x, y); }
OP_HOST_DEVICE inline double next_toward(double x, double y) { return nextafter(x, y); }

// Uniform in [from, to) for T = float or double.
template <class T>
OP_HOST_DEVICE inline T uniform_value(uint64_t seed, uint64_t index, double from, double to) {
  static_assert(std::is_floating_point<T>::value, "uniform_value: floating point types only");
  const Words r = philox4x32_10(seed, index);
  const double unit = std::is_same<T, float>::value ? unit_float(r.w[0]) : unit_double(r.w[0], r.w[1]);
  T value = static_cast<T>(from + unit * (to - from));
  // Rounding to T can land on `to` itself; the range is half-open.
  const T upper = static_cast<T>(to), lower = static_cast<T>(from);
  if (value >= upper && upper > lower) value = next_toward(upper, lower);
  return value;
}

// Normal(mean, std) by Box-Muller over one counter: two 53-bit uniforms, the cosine branch.
template <class T>
OP_HOST_DEVICE inline T normal_value(uint64_t seed, uint64_t index, double mean, double std) {
  static_assert(std::is_floating_point<T>::value, "normal_value: floating point types only");
  const Words r = philox4x32_10(seed, index);
  const double u1 = 1.0 - unit_double(r.w[0], r.w[1]);  // (0, 1]: log(u1) is finite
  const double u2 = unit_double(r.w[2], r.w[3]);
  // ::log, not log: a kernel that also includes ops/log.h has op::log in scope here.
  const double radius = ::sqrt(-2.0 * ::log(u1));
  return static_cast<T>(mean + std * radius * ::cos(6.283185307179586 * u2));
}

}  // namespace op::native::rng
