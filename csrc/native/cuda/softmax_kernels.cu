// CUDA loops of log_softmax_stub and log_softmax_backward_stub. The operands are contiguous with
// one shape, seen as [outer, n, inner] around the softmax dimension; one thread per row (the
// n elements along the dimension, `inner` apart) folds it like the CPU loop: the maximum, then
// the sum of exponentials in double. Rows of a classifier's logits are short, so a thread per
// row keeps every thread busy without a block reduction.
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
__global__ void log_softmax_kernel(T* out, const T* in, Rows r) {
  const int64_t rows = r.outer * r.inner;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows; row += step) {
    const T* x = in + row_start(r, row);
    T* y = out + row_start(r, row);
    T m = -INFINITY;
    for (int64_t k = 0; k < r.n; ++k) {
      const T v = x[k * r.inner];
      m = (v > m || v != v) ? v : m;  // a NaN, once taken, stays
    }
    double sum = 0;
    for (int64_t k = 0; k < r.n; ++k) sum += exp_of(x[k * r.inner] - m);
    const T log_sum = static_cast<T>(log(sum));
    for (int64_t k = 0; k < r.n; ++k) y[k * r.inner] = (x[k * r.inner] - m) - log_sum;
  }
}

template <class T>
__global__ void log_softmax_backward_kernel(T* grad_input, const T* grad_output, const T* output, Rows r) {
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

void check_cuda(const TensorBase& t, const char* op_name) {
  OP_CHECK(t.device().type() == DeviceType::CUDA && t.is_contiguous(), op_name, ": expected a contiguous cuda tensor, got a ",
           t.is_contiguous() ? "" : "strided ", "tensor on ", t.device().str());
}

void log_softmax_cuda(const TensorBase& out, const TensorBase& self, int64_t dim) {
  check_cuda(out, "_log_softmax");
  check_cuda(self, "_log_softmax");
  const Rows r = rows_around(self, dim);
  if (self.numel() == 0) return;
  OP_CUDA_DISPATCH_FLOATING_TYPES(self.dtype(), "_log_softmax", {
    log_softmax_kernel<scalar_t><<<cuda::blocks_for(r.outer * r.inner), cuda::kThreads>>>(
        out.data_ptr<scalar_t>(), self.data_ptr<scalar_t>(), r);
  });
  OP_CUDA_CHECK_LAUNCH();
}

void log_softmax_backward_cuda(const TensorBase& grad_input, const TensorBase& grad_output, const TensorBase& output,
                               int64_t dim) {
  for (const TensorBase* t : {&grad_input, &grad_output, &output}) check_cuda(*t, "_log_softmax_backward_data");
  const Rows r = rows_around(output, dim);
  if (output.numel() == 0) return;
  OP_CUDA_DISPATCH_FLOATING_TYPES(output.dtype(), "_log_softmax_backward_data", {
    log_softmax_backward_kernel<scalar_t><<<cuda::blocks_for(r.outer * r.inner), cuda::kThreads>>>(
        grad_input.data_ptr<scalar_t>(), grad_output.data_ptr<scalar_t>(), output.data_ptr<scalar_t>(), r);
  });
  OP_CUDA_CHECK_LAUNCH();
}

}  // namespace

OP_REGISTER_STUB(log_softmax_stub, CUDA, &log_softmax_cuda);
OP_REGISTER_STUB(log_softmax_backward_stub, CUDA, &log_softmax_backward_cuda);

}  // namespace op::native
