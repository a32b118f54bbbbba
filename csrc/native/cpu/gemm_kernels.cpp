// CPU loop of gemm_stub: out [B,M,N] = beta * bias + alpha * (a [B,M,K] @ b [B,K,N]).
//
// Each batch accumulates a @ b into a row-major block C (out itself when its rows are
// contiguous, else a buffer), then applies alpha and beta * bias and writes out. The product
// is cache-blocked in the usual way: a KC x NC slice of b and an MC x KC block of a are
// copied ("packed") into panels that a register-tiled micro-kernel reads sequentially, each
// call computing an MR x NR tile of C in vector registers. Packing reads through any
// strides, so transposed and broadcast (stride-0) operands need no separate copy.
//
// The micro-kernel is written once with compiler vector types; on x86-64 CPUs with AVX2 and
// FMA a second copy built for those instructions runs float and double (picked at run time,
// the library itself being compiled for the baseline).
//
// Built with OP_WITH_BLAS (scons --blas, opgen/scons/toolset/blas.py), float and double
// products go to the BLAS's cblas_?gemm instead: operands whose rows or columns are contiguous
// are passed as they are (NoTrans or Trans, with their leading dimension), others are copied
// into a contiguous block first; alpha is the BLAS's, beta * bias is added after, exactly as
// the loop below does. Integer dtypes, empty products and sizes past the BLAS's 32-bit ints
// keep the hand-written loop.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "core/scalar_type.h"
#include "native/stubs.h"

#ifdef OP_WITH_BLAS
#include <climits>

#include <cblas.h>

// The wheel's symbols carry a prefix (scipy_cblas_sgemm); the system's have none.
#ifndef BLAS_SYMBOL_PREFIX
#define BLAS_SYMBOL_PREFIX
#endif
#define OP_BLAS_CONCAT_(prefix, name) prefix##name
#define OP_BLAS_CONCAT(prefix, name) OP_BLAS_CONCAT_(prefix, name)
#define OP_CBLAS(name) OP_BLAS_CONCAT(BLAS_SYMBOL_PREFIX, cblas_##name)
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#define OP_GEMM_HAS_AVX2 1
#endif

namespace op::native {

namespace {

// Strided read-only view of one batch's matrix.
template <class T>
struct MatrixRef {
  const T* data;
  int64_t row_stride;
  int64_t col_stride;
  const T& at(int64_t i, int64_t j) const { return data[i * row_stride + j * col_stride]; }
};

constexpr int64_t round_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// ----- packing -----

// Rows [0, mc) x columns [0, kc) of a, as panels of MR rows: panel p holds, for each k, the
// MR values a[p*MR + r][k] side by side. Rows past mc are zero.
template <class T, int64_t MR>
void pack_a(const MatrixRef<T>& a, int64_t mc, int64_t kc, T* dst) {
  for (int64_t ir = 0; ir < mc; ir += MR) {
    const int64_t rows = std::min(MR, mc - ir);
    for (int64_t k = 0; k < kc; ++k) {
      for (int64_t r = 0; r < rows; ++r) dst[r] = a.at(ir + r, k);
      for (int64_t r = rows; r < MR; ++r) dst[r] = T(0);
      dst += MR;
    }
  }
}

// Rows [0, kc) x columns [0, nc) of b, as panels of NR columns: panel p holds, for each k,
// b[k][p*NR .. p*NR + NR). Columns past nc are zero.
template <class T, int64_t NR>
void pack_b(const MatrixRef<T>& b, int64_t kc, int64_t nc, T* dst) {
  for (int64_t jr = 0; jr < nc; jr += NR) {
    const int64_t cols = std::min(NR, nc - jr);
    for (int64_t k = 0; k < kc; ++k) {
      const T* row = &b.at(k, jr);
      if (b.col_stride == 1)
        std::memcpy(dst, row, sizeof(T) * cols);
      else
        for (int64_t c = 0; c < cols; ++c) dst[c] = row[c * b.col_stride];
      for (int64_t c = cols; c < NR; ++c) dst[c] = T(0);
      dst += NR;
    }
  }
}

// ----- the register-tiled product -----

// C[0:mr, 0:nr] += a_panel @ b_panel over kc steps, C rows ldc apart. The MR x NR tile lives
// in MR * NV vectors of VB bytes.
template <class T, int VB, int MR, int NV>
__attribute__((always_inline)) inline void micro_kernel(int64_t kc, const T* a, const T* b, T* c, int64_t ldc,
                                                        int64_t mr, int64_t nr) {
  typedef T Vec __attribute__((vector_size(VB)));
  constexpr int lanes = VB / sizeof(T);
  constexpr int NR = NV * lanes;
  Vec acc[MR][NV] = {};
  for (int64_t k = 0; k < kc; ++k) {
    Vec bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) std::memcpy(&bv[v], b + v * lanes, VB);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const T av = a[r];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] += av * bv[v];
    }
    a += MR;
    b += NR;
  }
  if (mr == MR && nr == NR) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        Vec cv;
        std::memcpy(&cv, c + r * ldc + v * lanes, VB);
        cv += acc[r][v];
        std::memcpy(c + r * ldc + v * lanes, &cv, VB);
      }
    return;
  }
  T tile[MR][NR];  // an edge tile: only part of it is inside C
  std::memcpy(tile, acc, sizeof(tile));
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t j = 0; j < nr; ++j) c[r * ldc + j] += tile[r][j];
}

// C (M x N, rows ldc apart) += a @ b, blocked for the caches. Inlined into each
// instruction-set variant below so the whole loop nest is compiled for it.
template <class T, int VB, int MR, int NV>
__attribute__((always_inline)) inline void tiled_product(int64_t M, int64_t N, int64_t K, const MatrixRef<T>& a,
                                                         const MatrixRef<T>& b, T* c, int64_t ldc) {
  constexpr int64_t NR = NV * (VB / sizeof(T));
  constexpr int64_t KC = 256;                    // a packed b row panel fits in L1
  constexpr int64_t MC = MR * 16;                // a packed a block fits in L2
  constexpr int64_t NC = round_up(4096, NR);     // the packed b slice fits in L3
  std::vector<T> packed_b(static_cast<size_t>(KC * round_up(std::min(NC, N), NR)));
  std::vector<T> packed_a(static_cast<size_t>(KC * round_up(std::min(MC, M), MR)));
  for (int64_t jc = 0; jc < N; jc += NC) {
    const int64_t nc = std::min(NC, N - jc);
    for (int64_t pc = 0; pc < K; pc += KC) {
      const int64_t kc = std::min(KC, K - pc);
      pack_b<T, NR>({&b.at(pc, jc), b.row_stride, b.col_stride}, kc, nc, packed_b.data());
      for (int64_t ic = 0; ic < M; ic += MC) {
        const int64_t mc = std::min(MC, M - ic);
        pack_a<T, MR>({&a.at(ic, pc), a.row_stride, a.col_stride}, mc, kc, packed_a.data());
        for (int64_t jr = 0; jr < nc; jr += NR)
          for (int64_t ir = 0; ir < mc; ir += MR)
            micro_kernel<T, VB, MR, NV>(kc, packed_a.data() + ir * kc, packed_b.data() + jr * kc,
                                        c + (ic + ir) * ldc + jc + jr, ldc, std::min<int64_t>(MR, mc - ir),
                                        std::min(NR, nc - jr));
      }
    }
  }
}

template <class T>
using ProductFn = void (*)(int64_t, int64_t, int64_t, const MatrixRef<T>&, const MatrixRef<T>&, T*, int64_t);

// Baseline build: 16-byte vectors, a 4 x 2-vector tile (fits the 16 SSE registers).
template <class T>
void product_baseline(int64_t M, int64_t N, int64_t K, const MatrixRef<T>& a, const MatrixRef<T>& b, T* c,
                      int64_t ldc) {
  tiled_product<T, 16, 4, 2>(M, N, K, a, b, c, ldc);
}

#ifdef OP_GEMM_HAS_AVX2
// AVX2 + FMA: 32-byte vectors, a 6 x 2-vector tile (12 of the 16 ymm registers).
__attribute__((target("avx2,fma"))) void product_avx2(int64_t M, int64_t N, int64_t K, const MatrixRef<float>& a,
                                                      const MatrixRef<float>& b, float* c, int64_t ldc) {
  tiled_product<float, 32, 6, 2>(M, N, K, a, b, c, ldc);
}
__attribute__((target("avx2,fma"))) void product_avx2(int64_t M, int64_t N, int64_t K, const MatrixRef<double>& a,
                                                      const MatrixRef<double>& b, double* c, int64_t ldc) {
  tiled_product<double, 32, 6, 2>(M, N, K, a, b, c, ldc);
}

bool cpu_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

template <class T>
ProductFn<T> pick_product() {
#ifdef OP_GEMM_HAS_AVX2
  if constexpr (std::is_floating_point_v<T>) {
    if (cpu_has_avx2_fma()) return static_cast<ProductFn<T>>(&product_avx2);
  }
#endif
  return &product_baseline<T>;
}

// Small or thin products (matrix-vector, tiny matrices): packing would cost more than it
// saves, so a plain i-k-j loop (the inner loop runs along a row of b and of C).
template <class T>
void simple_product(int64_t M, int64_t N, int64_t K, const MatrixRef<T>& a, const MatrixRef<T>& b, T* c,
                    int64_t ldc) {
  for (int64_t i = 0; i < M; ++i) {
    T* row = c + i * ldc;
    for (int64_t k = 0; k < K; ++k) {
      const T x = a.at(i, k);
      const T* b_row = &b.at(k, 0);
      for (int64_t j = 0; j < N; ++j) row[j] += x * b_row[j * b.col_stride];
    }
  }
}

bool worth_tiling(int64_t M, int64_t N, int64_t K) { return N >= 8 && M >= 4 && M * N * K >= 32 * 32 * 32; }

// One batch of out = scale * c + beta * bias (bias_data null: no bias term), c being the
// batch's product in a buffer or in out itself (ldc: its row stride). Both gemm paths finish here.
template <class T>
void store_batch(const TensorBase& out, int64_t batch, const T* c, int64_t ldc, T scale, const TensorBase& bias,
                 const T* bias_data, T beta) {
  const int64_t M = out.size(1), N = out.size(2);
  // Strides read once: the accessors are calls, and this loop runs M * N times per batch.
  const int64_t out_row = out.stride(1), out_col = out.stride(2);
  const int64_t bias_row = bias_data ? bias.stride(1) : 0, bias_col = bias_data ? bias.stride(2) : 0;
  T* out_batch = out.data_ptr<T>() + batch * out.stride(0);
  const T* bias_batch = bias_data ? bias_data + batch * bias.stride(0) : nullptr;
  for (int64_t i = 0; i < M; ++i) {
    const T* c_row = c + i * ldc;
    T* out_row_data = out_batch + i * out_row;
    const T* bias_row_data = bias_batch ? bias_batch + i * bias_row : nullptr;
    for (int64_t j = 0; j < N; ++j) {
      T value = c_row[j];
      if (scale != T(1)) value = scale * value;
      if (bias_row_data) value += beta * bias_row_data[j * bias_col];
      out_row_data[j * out_col] = value;
    }
  }
}

template <class T>
void gemm_typed(const TensorBase& out, const TensorBase& a, const TensorBase& b, const TensorBase& bias, const Scalar& beta,
                const Scalar& alpha) {
  const int64_t batches = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  const T alpha_value = alpha.to<T>(), beta_value = beta.to<T>();
  const bool scaled = alpha_value != T(1) || bias.defined();
  // Rows of out that are contiguous receive the product directly; anything else goes
  // through a row-major buffer.
  const bool direct = out.stride(2) == 1 || N == 1;
  std::vector<T> buffer(direct ? 0 : static_cast<size_t>(M * N));
  const ProductFn<T> product = worth_tiling(M, N, K) ? pick_product<T>() : &simple_product<T>;
  T* out_data = out.data_ptr<T>();
  const T* a_data = a.data_ptr<T>();
  const T* b_data = b.data_ptr<T>();
  const T* bias_data = bias.defined() ? bias.data_ptr<T>() : nullptr;
  for (int64_t batch = 0; batch < batches; ++batch) {
    T* out_batch = out_data + batch * out.stride(0);
    T* c = direct ? out_batch : buffer.data();
    const int64_t ldc = direct ? out.stride(1) : N;
    for (int64_t i = 0; i < M; ++i) std::fill(c + i * ldc, c + i * ldc + N, T(0));
    product(M, N, K, {a_data + batch * a.stride(0), a.stride(1), a.stride(2)},
            {b_data + batch * b.stride(0), b.stride(1), b.stride(2)}, c, ldc);
    if (direct && !scaled) continue;
    store_batch(out, batch, c, ldc, alpha_value, bias, bias_data, beta_value);
  }
}

#ifdef OP_WITH_BLAS
// ----- the BLAS path -----

void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K, float alpha, const float* a,
               int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  OP_CBLAS(sgemm)(CblasRowMajor, ta, tb, M, N, K, alpha, a, lda, b, ldb, 0.0f, c, ldc);
}
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K, double alpha, const double* a,
               int64_t lda, const double* b, int64_t ldb, double* c, int64_t ldc) {
  OP_CBLAS(dgemm)(CblasRowMajor, ta, tb, M, N, K, alpha, a, lda, b, ldb, 0.0, c, ldc);
}

constexpr int64_t kBlasMax = INT_MAX;

// A rows x cols matrix (row-major in the BLAS's terms) as the BLAS reads it: rows contiguous
// (NoTrans, ld = row stride) or columns contiguous (Trans, ld = column stride). A dimension of
// size 1 may have any stride. False when neither (broadcast or otherwise strided operands).
bool blas_layout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, CBLAS_TRANSPOSE& trans,
                 int64_t& ld) {
  if ((col_stride == 1 || cols == 1) && (rows == 1 || row_stride >= cols)) {
    trans = CblasNoTrans;
    ld = rows == 1 ? cols : row_stride;
  } else if ((row_stride == 1 || rows == 1) && (cols == 1 || col_stride >= rows)) {
    trans = CblasTrans;
    ld = cols == 1 ? rows : col_stride;
  } else {
    return false;
  }
  return ld >= 1 && ld <= kBlasMax;
}

// One batch's operand for the BLAS: itself when blas_layout takes it, else a row-major copy
// in `copy`.
template <class T>
const T* blas_operand(const MatrixRef<T>& m, int64_t rows, int64_t cols, std::vector<T>& copy, CBLAS_TRANSPOSE& trans,
                      int64_t& ld) {
  if (blas_layout(rows, cols, m.row_stride, m.col_stride, trans, ld)) return m.data;
  copy.resize(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) copy[i * cols + j] = m.at(i, j);
  trans = CblasNoTrans;
  ld = cols;
  return copy.data();
}

// gemm_typed's result through the BLAS; false (nothing written) when the BLAS cannot take it.
template <class T>
bool gemm_blas(const TensorBase& out, const TensorBase& a, const TensorBase& b, const TensorBase& bias, const Scalar& beta,
               const Scalar& alpha) {
  const int64_t batches = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  if (M <= 0 || N <= 0 || K <= 0 || M > kBlasMax || N > kBlasMax || K > kBlasMax) return false;
  const T alpha_value = alpha.to<T>(), beta_value = beta.to<T>();
  // Rows of out that are contiguous receive the product directly; anything else goes
  // through a row-major buffer.
  const int64_t out_ld = M == 1 ? N : out.stride(1);
  const bool direct = (out.stride(2) == 1 || N == 1) && out_ld >= N && out_ld <= kBlasMax;
  std::vector<T> buffer(direct ? 0 : static_cast<size_t>(M * N)), a_copy, b_copy;
  T* out_data = out.data_ptr<T>();
  const T* a_data = a.data_ptr<T>();
  const T* b_data = b.data_ptr<T>();
  const T* bias_data = bias.defined() ? bias.data_ptr<T>() : nullptr;
  for (int64_t batch = 0; batch < batches; ++batch) {
    T* out_batch = out_data + batch * out.stride(0);
    T* c = direct ? out_batch : buffer.data();
    const int64_t ldc = direct ? out_ld : N;
    CBLAS_TRANSPOSE ta, tb;
    int64_t lda, ldb;
    const T* a_matrix = blas_operand<T>({a_data + batch * a.stride(0), a.stride(1), a.stride(2)}, M, K, a_copy, ta, lda);
    const T* b_matrix = blas_operand<T>({b_data + batch * b.stride(0), b.stride(1), b.stride(2)}, K, N, b_copy, tb, ldb);
    blas_gemm(ta, tb, M, N, K, alpha_value, a_matrix, lda, b_matrix, ldb, c, ldc);
    if (direct && !bias_data) continue;
    store_batch(out, batch, c, ldc, T(1), bias, bias_data, beta_value);  // the BLAS applied alpha
  }
  return true;
}
#endif

void gemm_kernel(const TensorBase& out, const TensorBase& a, const TensorBase& b, const TensorBase& bias, const Scalar& beta,
                 const Scalar& alpha) {
#ifdef OP_WITH_BLAS
  if (out.dtype() == ScalarType::Float32 && gemm_blas<float>(out, a, b, bias, beta, alpha)) return;
  if (out.dtype() == ScalarType::Float64 && gemm_blas<double>(out, a, b, bias, beta, alpha)) return;
#endif
  OP_DISPATCH_NUMERIC_TYPES(out.dtype(), "gemm", gemm_typed<scalar_t>(out, a, b, bias, beta, alpha));
}

}  // namespace

OP_REGISTER_STUB(gemm_stub, CPU, &gemm_kernel);

}  // namespace op::native
