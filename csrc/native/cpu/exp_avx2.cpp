// vec_expf_row compiled for AVX2 + FMA (8 floats per instruction instead of SSE2's 4, and
// fused multiply-adds): unary_kernels.cpp calls it for contiguous float32 rows when the cpu
// has both. Only this file is compiled for AVX2; it includes nothing with external linkage
// that other files also define, so no AVX2 code can leak into baseline paths.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math", "no-math-errno")
#endif
#if defined(__x86_64__)
#pragma GCC target("avx2,fma")
#endif

#include <cstdint>

#include "native/cpu/vec_exp.h"

namespace op::native::cpu {

#if defined(__x86_64__)
void vec_expf_row_avx2(float* out, const float* in, int64_t n) { vec_expf_row(out, in, n); }
#endif

}  // namespace op::native::cpu
