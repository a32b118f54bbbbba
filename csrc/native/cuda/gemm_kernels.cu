// CUDA loop of gemm_stub: out [B,M,N] = beta * bias + alpha * (a [B,M,K] @ b [B,K,N]).
// float32 and float64 products go to cuBLAS when the build found it (OP_WITH_CUBLAS) and every
// operand is a matrix cuBLAS can name (one unit stride, a leading dimension, one batch stride):
// cuBLAS is column-major, so row-major out = a @ b is computed as out^T = b^T a^T. TF32 stays
// off (cuBLAS' default math), as torch's allow_tf32 is by default. Everything else (integer
// dtypes, other layouts, no cuBLAS) runs a plain shared-memory tiled product: each 16 x 16
// block of threads computes a 16 x 16 tile of one batch's out, stepping through K a 16-wide
// slice of a and b at a time, every operand read through its strides.

#include <limits>
#include <optional>

#include "native/cuda/loops.cuh"
#include "native/stubs.h"

#ifdef OP_WITH_CUBLAS
#include <cublas_v2.h>
#endif

namespace op::native {

namespace {

constexpr int kTile = 16;
constexpr int64_t kMaxGridY = 65535, kMaxGridZ = 65535;  // grid-stride loops cover the rest

struct Matrix3 {
  int64_t batch, row, col;  // strides in elements
};

template <class T>
struct GemmArgs {
  const T* a;
  const T* b;
  const T* bias;  // nullptr: none
  T* out;
  Matrix3 sa, sb, sbias, sout;
  int64_t batches, M, N, K;
  T alpha, beta;
};

template <class T>
__global__ void gemm_kernel(GemmArgs<T> g) {
  __shared__ T a_tile[kTile][kTile];
  __shared__ T b_tile[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t batch = blockIdx.z; batch < g.batches; batch += gridDim.z) {
    for (int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile; row0 < g.M; row0 += static_cast<int64_t>(gridDim.y) * kTile) {
      const int64_t row = row0 + ty, col = static_cast<int64_t>(blockIdx.x) * kTile + tx;
      const T* a = g.a + batch * g.sa.batch;
      const T* b = g.b + batch * g.sb.batch;
      T acc = T(0);
      for (int64_t k0 = 0; k0 < g.K; k0 += kTile) {
        a_tile[ty][tx] = row < g.M && k0 + tx < g.K ? a[row * g.sa.row + (k0 + tx) * g.sa.col] : T(0);
        b_tile[ty][tx] = k0 + ty < g.K && col < g.N ? b[(k0 + ty) * g.sb.row + col * g.sb.col] : T(0);
        __syncthreads();
        for (int k = 0; k < kTile; ++k) acc += a_tile[ty][k] * b_tile[k][tx];
        __syncthreads();
      }
      if (row < g.M && col < g.N) {
        T value = g.alpha * acc;
        if (g.bias) value += g.beta * g.bias[batch * g.sbias.batch + row * g.sbias.row + col * g.sbias.col];
        g.out[batch * g.sout.batch + row * g.sout.row + col * g.sout.col] = value;
      }
    }
  }
}

Matrix3 strides_of(const TensorBase& t) { return {t.stride(0), t.stride(1), t.stride(2)}; }

template <class T>
void gemm_typed(const TensorBase& out, const TensorBase& a, const TensorBase& b, const TensorBase& bias, const Scalar& beta,
                const Scalar& alpha) {
  GemmArgs<T> g{};
  g.batches = out.size(0);
  g.M = out.size(1);
  g.N = out.size(2);
  g.K = a.size(2);
  if (g.batches == 0 || g.M == 0 || g.N == 0) return;
  g.out = static_cast<T*>(out.data_ptr());
  g.a = static_cast<const T*>(a.data_ptr());
  g.b = static_cast<const T*>(b.data_ptr());
  g.bias = bias.defined() ? static_cast<const T*>(bias.data_ptr()) : nullptr;
  g.sout = strides_of(out);
  g.sa = strides_of(a);
  g.sb = strides_of(b);
  if (bias.defined()) g.sbias = strides_of(bias);
  g.alpha = alpha.to<T>();
  g.beta = beta.to<T>();
  const dim3 threads(kTile, kTile);
  const dim3 blocks(static_cast<unsigned>((g.N + kTile - 1) / kTile),
                    static_cast<unsigned>(std::min<int64_t>((g.M + kTile - 1) / kTile, kMaxGridY)),
                    static_cast<unsigned>(std::min<int64_t>(g.batches, kMaxGridZ)));
  OP_CHECK(blocks.x <= 0x7fffffffu, "gemm: N = ", g.N, " is too large for one CUDA launch");
  gemm_kernel<T><<<blocks, threads, 0, cuda::stream()>>>(g);
  OP_CUDA_CHECK_LAUNCH();
}

#ifdef OP_WITH_CUBLAS

// A matrix of `rows` x `cols` as cuBLAS names it: stored column-major with leading dimension
// `ld`, transposed (`trans`) when its memory holds the transpose.
struct BlasMatrix {
  cublasOperation_t trans;
  int ld;
};

bool fits_int(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

// The column-major view of a rows x cols matrix with the given strides: memory that is
// row-major (unit column stride) holds its transpose. A size-1 dimension's stride is free.
std::optional<BlasMatrix> column_major(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  const int64_t need_rows = std::max<int64_t>(rows, 1), need_cols = std::max<int64_t>(cols, 1);
  if ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= need_cols)) {
    const int64_t ld = rows == 1 ? need_cols : row_stride;
    if (fits_int(ld)) return BlasMatrix{CUBLAS_OP_T, static_cast<int>(ld)};
  }
  if ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= need_rows)) {
    const int64_t ld = cols == 1 ? need_rows : col_stride;
    if (fits_int(ld)) return BlasMatrix{CUBLAS_OP_N, static_cast<int>(ld)};
  }
  return std::nullopt;
}

const char* blas_status_text(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "a cuBLAS error";
  }
}

void check_blas(cublasStatus_t status, const char* call) {
  OP_CHECK(status == CUBLAS_STATUS_SUCCESS, "CUDA: ", call, " failed: ", blas_status_text(status), " (", int(status), ")");
}

// One handle per thread (a handle must not serve two threads at once), made on first use and
// kept: destroying it at thread exit could outlive the CUDA runtime.
cublasHandle_t blas_handle() {
  thread_local cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    check_blas(cublasCreate(&h), "cublasCreate");
    return h;
  }();
  check_blas(cublasSetStream(handle, cuda::stream()), "cublasSetStream");
  return handle;
}

cublasStatus_t strided_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                               const float* alpha, const float* A, int lda, long long sa, const float* B, int ldb,
                               long long sb, const float* beta, float* C, int ldc, long long sc, int batches) {
  return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batches);
}
cublasStatus_t strided_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                               const double* alpha, const double* A, int lda, long long sa, const double* B, int ldb,
                               long long sb, const double* beta, double* C, int ldc, long long sc, int batches) {
  return cublasDgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batches);
}

// out^T [N x M] = b^T [N x K] @ a^T [K x M] in cuBLAS' column-major terms. False when an
// operand's layout has no cuBLAS name (the tiled kernel runs instead).
template <class T>
bool blas_gemm(const TensorBase& out, const TensorBase& a, const TensorBase& b, const TensorBase& bias, const Scalar& beta,
               const Scalar& alpha) {
  const int64_t batches = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  if (K == 0 || !fits_int(M) || !fits_int(N) || !fits_int(K) || !fits_int(batches)) return false;
  // out^T must be stored column-major (N x M, leading dimension ldc): out row-major.
  const bool out_rows = (N == 1 || out.stride(2) == 1) && (M == 1 || out.stride(1) >= std::max<int64_t>(N, 1));
  const int64_t ldc = M == 1 ? std::max<int64_t>(N, 1) : out.stride(1);
  const auto bt = column_major(N, K, b.stride(2), b.stride(1));  // b^T: N x K
  const auto at = column_major(K, M, a.stride(2), a.stride(1));  // a^T: K x M
  if (!out_rows || !fits_int(ldc) || !bt || !at) return false;
  if (batches > 1 && out.stride(0) == 0) return false;
  const T alpha_value = alpha.to<T>();
  T beta_value = bias.defined() ? beta.to<T>() : T(0);
  if (beta_value != T(0)) {
    // cuBLAS adds beta * C: C starts as the bias broadcast to out.
    cuda::elementwise<T>(out.sizes(), out, std::array<TensorBase, 1>{bias}, cuda::Identity{});
  }
  check_blas(strided_batched(blas_handle(), bt->trans, at->trans, static_cast<int>(N), static_cast<int>(M),
                             static_cast<int>(K), &alpha_value, static_cast<const T*>(b.data_ptr()), bt->ld,
                             b.stride(0), static_cast<const T*>(a.data_ptr()), at->ld, a.stride(0), &beta_value,
                             static_cast<T*>(out.data_ptr()), static_cast<int>(ldc), out.stride(0), static_cast<int>(batches)),
             "cublasGemmStridedBatched");
  return true;
}

#endif  // OP_WITH_CUBLAS

template <class T>
void gemm_dispatch(const TensorBase& out, const TensorBase& a, const TensorBase& b, const TensorBase& bias,
                   const Scalar& beta, const Scalar& alpha) {
#ifdef OP_WITH_CUBLAS
  if constexpr (std::is_floating_point_v<T>) {
    if (out.numel() > 0 && blas_gemm<T>(out, a, b, bias, beta, alpha)) return;
  }
#endif
  gemm_typed<T>(out, a, b, bias, beta, alpha);
}

void gemm_kernel_cuda(const TensorBase& out, const TensorBase& a, const TensorBase& b, const TensorBase& bias, const Scalar& beta,
                      const Scalar& alpha) {
  for (const TensorBase* t : {&out, &a, &b})
    OP_CHECK(t->device().type() == DeviceType::CUDA, "gemm: expected cuda tensors, got one on ", t->device().str());
  OP_DISPATCH_NUMERIC_TYPES(out.dtype(), "gemm", gemm_dispatch<scalar_t>(out, a, b, bias, beta, alpha));
}

}  // namespace

OP_REGISTER_STUB(gemm_stub, CUDA, &gemm_kernel_cuda);

}  // namespace op::native
