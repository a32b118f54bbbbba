// Division by a fixed 32-bit divisor as a multiply-high, an add and a shift (the round-up
// method of Granlund and Montgomery), for the CUDA loops' index math: a 32-bit division costs
// a GPU dozens of instructions, and the divisors (tensor sizes) are known before the launch.
// Exact for every dividend below 2^31, which is why the loops use it only below that. Plain
// C++ outside nvcc, so the unit tests check it on the host.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define OP_HOST_DEVICE __host__ __device__
#else
#define OP_HOST_DEVICE
#endif

namespace op::native {

struct IntDivider {
  uint32_t divisor = 1, magic = 1, shift = 0;

  IntDivider() = default;
  // d >= 1. shift = ceil(log2 d); magic = floor(2^32 (2^shift - d) / d) + 1, below 2^32.
  explicit IntDivider(uint32_t d) : divisor(d) {
    shift = 0;
    while (shift < 32 && (uint64_t(1) << shift) < d) ++shift;
    magic = static_cast<uint32_t>(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  }

  // n / divisor for n < 2^31 (high + n then stays below 2^32).
  OP_HOST_DEVICE uint32_t div(uint32_t n) const {
#ifdef __CUDA_ARCH__
    const uint32_t high = __umulhi(n, magic);
#else
    const uint32_t high = static_cast<uint32_t>((uint64_t(n) * magic) >> 32);
#endif
    return (high + n) >> shift;
  }
};

}  // namespace op::native
