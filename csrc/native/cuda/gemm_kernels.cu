// CUDA loop of gemm_stub: out [B,M,N] = beta * bias + alpha * (a [B,M,K] @ b [B,K,N]).
// A plain shared-memory tiled product: each 16 x 16 block of threads computes a 16 x 16 tile
// of one batch's out, stepping through K a 16-wide slice of a and b at a time. Every operand
// is read through its strides, so transposed and broadcast inputs need no copy.

#include "native/cuda/loops.cuh"
#include "native/stubs.h"

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
  gemm_kernel<T><<<blocks, threads>>>(g);
  OP_CUDA_CHECK_LAUNCH();
}

void gemm_kernel_cuda(const TensorBase& out, const TensorBase& a, const TensorBase& b, const TensorBase& bias, const Scalar& beta,
                      const Scalar& alpha) {
  for (const TensorBase* t : {&out, &a, &b})
    OP_CHECK(t->device().type() == DeviceType::CUDA, "gemm: expected cuda tensors, got one on ", t->device().str());
  OP_DISPATCH_NUMERIC_TYPES(out.dtype(), "gemm", gemm_typed<scalar_t>(out, a, b, bias, beta, alpha));
}

}  // namespace

OP_REGISTER_STUB(gemm_stub, CUDA, &gemm_kernel_cuda);

}  // namespace op::native
