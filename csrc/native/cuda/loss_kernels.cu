// CUDA loops of the loss stubs. mse and mse_backward are elementwise (loops.cuh);
// nll_loss runs one thread per row for `none` and the backward, and one block folding every
// row in shared memory (in double) for mean and sum. A target out of [0, C) that is not
// ignore_index is reported through device_errors.h: the op::Error the CPU loop raises at once
// surfaces at the next synchronisation, so a training step queues without waiting.
#include <array>

#include "native/cuda/device_errors.h"
#include "native/cuda/loops.cuh"
#include "native/stubs.h"

namespace op::native {

namespace {

constexpr int64_t kNone = 0, kMean = 1;

struct Mse {
  template <class T>
  __device__ T operator()(T x, T y) const {
    const T d = x - y;
    return d * d;
  }
};

struct MseBackward {
  double norm;
  template <class T>
  __device__ T operator()(T x, T t, T g) const {
    return static_cast<T>(norm) * (x - t) * g;
  }
};

void mse_cuda(TensorIteratorBase& iter) {
  OP_CUDA_DISPATCH_FLOATING_TYPES(iter.common_dtype(), "mse_loss", { cuda::gpu_kernel<scalar_t>(iter, Mse{}); });
}

void mse_backward_cuda(const TensorBase& grad_input, const TensorBase& self, const TensorBase& target,
                       const TensorBase& grad_output, double norm) {
  OP_CUDA_DISPATCH_FLOATING_TYPES(grad_input.dtype(), "mse_loss_backward", {
    cuda::elementwise<scalar_t, scalar_t, scalar_t>(grad_input.sizes(), grad_input,
                                                    std::array<TensorBase, 3>{self, target, grad_output},
                                                    MseBackward{norm});
  });
}

// ----- nll_loss -----

struct NllArgs {
  const int64_t* target;
  int64_t rows, classes, ignore_index;
  int* error_slot;  // device_errors.h: set to error_code by any thread that meets a bad target
  int error_code;
};

// The class of row i, or -1 when the row is ignored or its target is out of bounds (flagged).
__device__ inline int64_t class_of(const NllArgs& a, int64_t i) {
  const int64_t c = a.target[i];
  if (c == a.ignore_index) return -1;
  if (c < 0 || c >= a.classes) {
    *a.error_slot = a.error_code;
    return -1;
  }
  return c;
}

template <class T>
__global__ void nll_none_kernel(T* out, const T* x, const T* w, NllArgs a) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.rows; i += step) {
    const int64_t c = class_of(a, i);
    out[i] = c < 0 ? T(0) : -x[i * a.classes + c] * (w ? w[c] : T(1));
  }
}

// One block: every thread folds a stride of rows, then the block folds the threads.
template <class T>
__global__ void nll_reduce_kernel(T* out, T* total_weight, const T* x, const T* w, NllArgs a, bool mean) {
  __shared__ double loss[cuda::kThreads];
  __shared__ double total[cuda::kThreads];
  double my_loss = 0, my_total = 0;
  for (int64_t i = threadIdx.x; i < a.rows; i += blockDim.x) {
    const int64_t c = class_of(a, i);
    if (c < 0) continue;
    const double wc = w ? static_cast<double>(w[c]) : 1.0;
    my_loss -= static_cast<double>(x[i * a.classes + c]) * wc;
    my_total += wc;
  }
  loss[threadIdx.x] = my_loss;
  total[threadIdx.x] = my_total;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      loss[threadIdx.x] += loss[threadIdx.x + half];
      total[threadIdx.x] += total[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    *total_weight = static_cast<T>(total[0]);
    *out = static_cast<T>(mean ? loss[0] / total[0] : loss[0]);  // mean of nothing: 0/0 = nan
  }
}

template <class T>
__global__ void nll_backward_kernel(T* grad_input, const T* grad_output, const T* total_weight, const T* w, NllArgs a,
                                    int64_t reduction) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.rows; i += step) {
    const int64_t c = class_of(a, i);
    if (c < 0) continue;
    const T grad = reduction == kNone ? -grad_output[i]
                   : reduction == kMean ? -grad_output[0] / *total_weight
                                        : -grad_output[0];
    grad_input[i * a.classes + c] = w ? w[c] * grad : grad;
  }
}

NllArgs nll_args(const TensorBase& target, int64_t classes, int64_t ignore_index, const char* op_name) {
  const int code = op::cuda::code_for(
      str(op_name, ": Target is out of bounds (a target is neither ignore_index nor in [0, ", classes, "))"));
  return NllArgs{target.data_ptr<int64_t>(), target.numel(), classes, ignore_index, op::cuda::device_error_slot(), code};
}

void nll_loss_forward_cuda(const TensorBase& output, const TensorBase& total_weight, const TensorBase& self,
                           const TensorBase& target, const TensorBase& weight, int64_t reduction,
                           int64_t ignore_index) {
  const int64_t classes = self.size(1);
  const NllArgs a = nll_args(target, classes, ignore_index, "nll_loss_forward");
  OP_CUDA_DISPATCH_FLOATING_TYPES(self.dtype(), "nll_loss_forward", {
    const scalar_t* w = weight.defined() ? weight.data_ptr<scalar_t>() : nullptr;
    if (reduction == kNone) {
      OP_CUDA_CHECK(cudaMemsetAsync(total_weight.data_ptr(), 0, sizeof(scalar_t), cuda::stream()));
      if (a.rows > 0)
        nll_none_kernel<scalar_t><<<cuda::blocks_for(a.rows), cuda::kThreads, 0, cuda::stream()>>>(
            output.data_ptr<scalar_t>(), self.data_ptr<scalar_t>(), w, a);
    } else {
      nll_reduce_kernel<scalar_t><<<1, cuda::kThreads, 0, cuda::stream()>>>(output.data_ptr<scalar_t>(), total_weight.data_ptr<scalar_t>(),
                                                         self.data_ptr<scalar_t>(), w, a, reduction == kMean);
    }
  });
  OP_CUDA_CHECK_LAUNCH();
}

void nll_loss_backward_cuda(const TensorBase& grad_input, const TensorBase& grad_output, const TensorBase& target,
                            const TensorBase& weight, const TensorBase& total_weight, int64_t reduction,
                            int64_t ignore_index) {
  const int64_t classes = grad_input.size(1);
  const NllArgs a = nll_args(target, classes, ignore_index, "nll_loss_backward");
  OP_CUDA_CHECK(cudaMemsetAsync(grad_input.data_ptr(), 0, static_cast<size_t>(grad_input.numel()) * grad_input.itemsize(), cuda::stream()));
  if (a.rows == 0) return;
  OP_CUDA_DISPATCH_FLOATING_TYPES(grad_input.dtype(), "nll_loss_backward", {
    const scalar_t* w = weight.defined() ? weight.data_ptr<scalar_t>() : nullptr;
    nll_backward_kernel<scalar_t><<<cuda::blocks_for(a.rows), cuda::kThreads, 0, cuda::stream()>>>(
        grad_input.data_ptr<scalar_t>(), grad_output.data_ptr<scalar_t>(), total_weight.data_ptr<scalar_t>(), w, a,
        reduction);
  });
  OP_CUDA_CHECK_LAUNCH();
}

}  // namespace

OP_REGISTER_STUB(mse_stub, CUDA, &mse_cuda);
OP_REGISTER_STUB(mse_backward_stub, CUDA, &mse_backward_cuda);
OP_REGISTER_STUB(nll_loss_forward_stub, CUDA, &nll_loss_forward_cuda);
OP_REGISTER_STUB(nll_loss_backward_stub, CUDA, &nll_loss_backward_cuda);

}  // namespace op::native
