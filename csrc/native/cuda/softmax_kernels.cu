// CUDA loops of log_softmax_stub and log_softmax_backward_stub. The operands are contiguous with
// one shape, seen as [outer, n, inner] around the softmax dimension. Like the CPU loop, each row
// (the n elements along the dimension, `inner` apart) is folded as its maximum, then the sum of
// exponentials in double. Rows along the last dimension (inner == 1, a classifier's logits)
// are adjacent in memory: a warp folds each short row and a block each long one, with shuffles.
// Rows across other dimensions interleave: a thread folds each, so a warp reads adjacent ones.
#include <math.h>

#include "native/cuda/loops.cuh"
#include "native/softmax_rows.h"
#include "native/stubs.h"

namespace op::native {

namespace {

__device__ inline float exp_of(float x) { return expf(x); }
__device__ inline double exp_of(double x) { return exp(x); }

// Element 0 of row `row`.
__device__ inline int64_t row_start(const Rows& r, int64_t row) {
  return (row / r.inner) * r.n * r.inner + row % r.inner;
}

template <class T>
__device__ inline T max_with_nan(T a, T b) {
  return (b > a || b != b) && a == a ? b : a;  // a NaN, once taken, stays
}

// The fold of `value` over the kWidth threads that share a row: a warp's lanes (kWidth 32) or
// the whole block (kWidth kThreads, through `scratch`, one entry per warp). Every thread of the
// row gets the result.
template <int kWidth, class T, class Combine>
__device__ T fold_row(T value, T* scratch, Combine combine) {
  for (int offset = 16; offset > 0; offset /= 2) value = combine(value, __shfl_xor_sync(0xffffffffu, value, offset));
  if constexpr (kWidth > 32) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();  // scratch may still be read from the previous fold
    if (lane == 0) scratch[warp] = value;
    __syncthreads();
    value = scratch[0];
    for (int w = 1; w < kWidth / 32; ++w) value = combine(value, scratch[w]);
  }
  return value;
}

// Rows of kWidth threads: the block holds kThreads / kWidth of them, and the grid strides on.
template <int kWidth>
struct RowTiling {
  static constexpr int kRowsPerBlock = cuda::kThreads / kWidth;
  __device__ static int64_t first_row() { return static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWidth; }
  __device__ static int64_t row_step() { return static_cast<int64_t>(gridDim.x) * kRowsPerBlock; }
  __device__ static int lane() { return threadIdx.x % kWidth; }
};

// The fold of one thread's elements of a row (lane, lane + kWidth, ...) with four loads in
// flight: four partial results (`add` takes in one value), merged at the end (max and sum do not
// depend on the order, but for a sum's rounding).
template <int kWidth, class T, class Acc, class Add, class Merge>
__device__ Acc fold_in_flight(const T* row, int64_t n, Acc init, Add add, Merge merge) {
  constexpr int kInFlight = 4;
  const int lane = RowTiling<kWidth>::lane();
  Acc acc[kInFlight] = {init, init, init, init};
  int64_t k = lane;
  for (; k + (kInFlight - 1) * kWidth < n; k += kInFlight * kWidth) {
    T v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) v[j] = row[k + j * kWidth];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) acc[j] = add(acc[j], v[j]);
  }
  for (; k < n; k += kWidth) acc[0] = add(acc[0], row[k]);
  return merge(merge(acc[0], acc[1]), merge(acc[2], acc[3]));
}

// out[k] = f(a[k], b[k]) for one thread's elements of a row (lane, lane + kWidth, ...), four of
// each input read before any result is written: a store may alias the next loads, so a plain
// loop would wait out the memory latency at every element.
template <int kWidth, class T, class F>
__device__ void map_in_flight(T* out, const T* a, const T* b, int64_t n, F f) {
  constexpr int kInFlight = 4;
  int64_t k = RowTiling<kWidth>::lane();
  for (; k + (kInFlight - 1) * kWidth < n; k += kInFlight * kWidth) {
    T va[kInFlight], vb[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      va[j] = a[k + j * kWidth];
      vb[j] = b[k + j * kWidth];
    }
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) out[k + j * kWidth] = f(va[j], vb[j]);
  }
  for (; k < n; k += kWidth) out[k] = f(a[k], b[k]);
}

// Adjacent rows (inner == 1). All threads of a block run the same number of iterations, so the
// block-wide folds see every thread.
template <int kWidth, class T>
__global__ void log_softmax_adjacent_kernel(T* out, const T* in, int64_t rows, int64_t n) {
  using Tiling = RowTiling<kWidth>;
  __shared__ double scratch_sum[kWidth > 32 ? kWidth / 32 : 1];
  __shared__ T scratch_max[kWidth > 32 ? kWidth / 32 : 1];
  const int64_t rounds = (rows + Tiling::kRowsPerBlock - 1) / Tiling::kRowsPerBlock;
  for (int64_t row = Tiling::first_row(), round = blockIdx.x; round < rounds; row += Tiling::row_step(), round += gridDim.x) {
    const bool live = row < rows;
    const T* x = in + (live ? row : 0) * n;
    T m = -INFINITY;
    const auto larger = [](T a, T b) { return max_with_nan(a, b); };
    const auto plus = [](double a, double b) { return a + b; };
    if (live) m = fold_in_flight<kWidth>(x, n, m, larger, larger);
    m = fold_row<kWidth>(m, scratch_max, larger);
    double sum = 0;
    if (live) sum = fold_in_flight<kWidth>(x, n, 0.0, [m](double a, T v) { return a + exp_of(v - m); }, plus);
    sum = fold_row<kWidth>(sum, scratch_sum, plus);
    if (live) {
      const T log_sum = static_cast<T>(log(sum));
      map_in_flight<kWidth>(out + row * n, x, x, n, [m, log_sum](T v, T) { return (v - m) - log_sum; });
    }
  }
}

template <int kWidth, class T>
__global__ void log_softmax_backward_adjacent_kernel(T* grad_input, const T* grad_output, const T* output, int64_t rows,
                                                     int64_t n) {
  using Tiling = RowTiling<kWidth>;
  __shared__ double scratch[kWidth > 32 ? kWidth / 32 : 1];
  const int64_t rounds = (rows + Tiling::kRowsPerBlock - 1) / Tiling::kRowsPerBlock;
  for (int64_t row = Tiling::first_row(), round = blockIdx.x; round < rounds; row += Tiling::row_step(), round += gridDim.x) {
    const bool live = row < rows;
    const int64_t start = (live ? row : 0) * n;
    double sum = 0;
    const auto plus = [](double a, double b) { return a + b; };
    if (live) sum = fold_in_flight<kWidth>(grad_output + start, n, 0.0, plus, plus);
    sum = fold_row<kWidth>(sum, scratch, plus);
    if (live) {
      const T total = static_cast<T>(sum);
      map_in_flight<kWidth>(grad_input + start, grad_output + start, output + start, n,
                            [total](T g, T y) { return g - exp_of(y) * total; });
    }
  }
}

// Interleaved rows (inner > 1): a thread per row.
template <class T>
__global__ void log_softmax_interleaved_kernel(T* out, const T* in, Rows r) {
  const int64_t rows = r.outer * r.inner;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows; row += step) {
    const T* x = in + row_start(r, row);
    T* y = out + row_start(r, row);
    T m = -INFINITY;
    for (int64_t k = 0; k < r.n; ++k) m = max_with_nan(m, x[k * r.inner]);
    double sum = 0;
    for (int64_t k = 0; k < r.n; ++k) sum += exp_of(x[k * r.inner] - m);
    const T log_sum = static_cast<T>(log(sum));
    for (int64_t k = 0; k < r.n; ++k) y[k * r.inner] = (x[k * r.inner] - m) - log_sum;
  }
}

template <class T>
__global__ void log_softmax_backward_interleaved_kernel(T* grad_input, const T* grad_output, const T* output, Rows r) {
  const int64_t rows = r.outer * r.inner;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows; row += step) {
    const int64_t start = row_start(r, row);
    double sum = 0;
    for (int64_t k = 0; k < r.n; ++k) sum += grad_output[start + k * r.inner];
    const T total = static_cast<T>(sum);
    for (int64_t k = 0; k < r.n; ++k) {
      const int64_t i = start + k * r.inner;
      grad_input[i] = grad_output[i] - exp_of(output[i]) * total;
    }
  }
}

// A warp per row up to this length, a block per row beyond.
constexpr int64_t kWarpRowLimit = 1024;

// Blocks for `rows` rows of kWidth threads each.
template <int kWidth>
unsigned row_blocks(int64_t rows) {
  const int64_t per_block = RowTiling<kWidth>::kRowsPerBlock;
  return static_cast<unsigned>(std::min<int64_t>((rows + per_block - 1) / per_block, 0x7fffffff));
}

void check_cuda(const TensorBase& t, const char* op_name) {
  OP_CHECK(t.device().type() == DeviceType::CUDA && t.is_contiguous(), op_name, ": expected a contiguous cuda tensor, got a ",
           t.is_contiguous() ? "" : "strided ", "tensor on ", t.device().str());
}

void log_softmax_cuda(const TensorBase& out, const TensorBase& self, int64_t dim) {
  check_cuda(out, "_log_softmax");
  check_cuda(self, "_log_softmax");
  const Rows r = rows_around(self, dim);
  if (self.numel() == 0) return;
  const cudaStream_t s = cuda::stream();
  const int64_t rows = r.outer * r.inner;
  OP_CUDA_DISPATCH_FLOATING_TYPES(self.dtype(), "_log_softmax", {
    scalar_t* y = out.data_ptr<scalar_t>();
    const scalar_t* x = self.data_ptr<scalar_t>();
    if (r.inner > 1)
      log_softmax_interleaved_kernel<scalar_t><<<cuda::blocks_for(rows), cuda::kThreads, 0, s>>>(y, x, r);
    else if (r.n <= kWarpRowLimit)
      log_softmax_adjacent_kernel<32, scalar_t><<<row_blocks<32>(rows), cuda::kThreads, 0, s>>>(y, x, rows, r.n);
    else
      log_softmax_adjacent_kernel<cuda::kThreads, scalar_t><<<row_blocks<cuda::kThreads>(rows), cuda::kThreads, 0, s>>>(
          y, x, rows, r.n);
  });
  OP_CUDA_CHECK_LAUNCH();
}

void log_softmax_backward_cuda(const TensorBase& grad_input, const TensorBase& grad_output, const TensorBase& output,
                               int64_t dim) {
  for (const TensorBase* t : {&grad_input, &grad_output, &output}) check_cuda(*t, "_log_softmax_backward_data");
  const Rows r = rows_around(output, dim);
  if (output.numel() == 0) return;
  const cudaStream_t s = cuda::stream();
  const int64_t rows = r.outer * r.inner;
  OP_CUDA_DISPATCH_FLOATING_TYPES(output.dtype(), "_log_softmax_backward_data", {
    scalar_t* gi = grad_input.data_ptr<scalar_t>();
    const scalar_t* go = grad_output.data_ptr<scalar_t>();
    const scalar_t* y = output.data_ptr<scalar_t>();
    if (r.inner > 1)
      log_softmax_backward_interleaved_kernel<scalar_t><<<cuda::blocks_for(rows), cuda::kThreads, 0, s>>>(gi, go, y, r);
    else if (r.n <= kWarpRowLimit)
      log_softmax_backward_adjacent_kernel<32, scalar_t><<<row_blocks<32>(rows), cuda::kThreads, 0, s>>>(gi, go, y, rows, r.n);
    else
      log_softmax_backward_adjacent_kernel<cuda::kThreads, scalar_t>
          <<<row_blocks<cuda::kThreads>(rows), cuda::kThreads, 0, s>>>(gi, go, y, rows, r.n);
  });
  OP_CUDA_CHECK_LAUNCH();
}

}  // namespace

OP_REGISTER_STUB(log_softmax_stub, CUDA, &log_softmax_cuda);
OP_REGISTER_STUB(log_softmax_backward_stub, CUDA, &log_softmax_backward_cuda);

}  // namespace op::native
