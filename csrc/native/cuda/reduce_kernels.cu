// CUDA loops of the reduction stubs (sum, mean, amax, amin, argmax). `result` has self's rank
// with size 1 where self is reduced. One block per output element: its threads stride over
// the reduced elements, then fold their partial results in shared memory.
#include <math.h>

#include <type_traits>

#include "native/cuda/loops.cuh"
#include "native/stubs.h"

namespace op::native {

namespace {

using cuda::kThreads;
using cuda::OffsetCalculator;

struct ReduceArgs {
  OffsetCalculator<2> kept;     // over the output elements: offsets in self and in result
  OffsetCalculator<1> reduced;  // over one output's reduced elements: offsets in self
  int64_t nout;
  int64_t nreduced;
};

ReduceArgs plan(const TensorBase& result, const TensorBase& self, const char* what) {
  OP_CHECK(result.dim() == self.dim(), what, ": result of shape ", str_list(result.sizes()),
           " does not keep the dimensions of self's shape ", str_list(self.sizes()));
  std::vector<int64_t> kept_sizes, reduced_sizes;
  std::array<std::vector<int64_t>, 2> kept_strides;
  std::array<std::vector<int64_t>, 1> reduced_strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (result.size(d) == 1 && self.size(d) != 1) {
      reduced_sizes.push_back(self.size(d));
      reduced_strides[0].push_back(self.stride(d));
    } else {
      OP_CHECK(result.size(d) == self.size(d), what, ": result of shape ", str_list(result.sizes()),
               " does not match self's shape ", str_list(self.sizes()));
      kept_sizes.push_back(self.size(d));
      kept_strides[0].push_back(self.stride(d));
      kept_strides[1].push_back(result.stride(d));
    }
  }
  ReduceArgs args{};
  args.kept = cuda::make_offset_calculator<2>(kept_sizes, kept_strides);
  args.reduced = cuda::make_offset_calculator<1>(reduced_sizes, reduced_strides);
  args.nout = numel_of(kept_sizes);
  args.nreduced = numel_of(reduced_sizes);
  return args;
}

template <class T>
__device__ T lowest() {
  if constexpr (std::is_same_v<T, bool>)
    return false;
  else if constexpr (std::is_floating_point_v<T>)
    return -INFINITY;
  else
    return static_cast<T>(std::make_unsigned_t<T>(1) << (sizeof(T) * 8 - 1));
}
template <class T>
__device__ T highest() {
  if constexpr (std::is_same_v<T, bool>)
    return true;
  else if constexpr (std::is_floating_point_v<T>)
    return INFINITY;
  else
    return static_cast<T>(~lowest<T>());
}

// Each op: Acc (a plain aggregate: it lives in shared memory), identity(), make(value, index
// among the reduced elements), combine(a, b) and project(acc, count) -> Out.
// Like the CPU loops: floating sums accumulate in double, integral (and bool) ones in int64.
template <class T>
struct Sum {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  using Out = T;
  __device__ Acc identity() const { return Acc(0); }
  __device__ Acc make(T x, int64_t) const { return static_cast<Acc>(x); }
  __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ Out project(Acc a, int64_t) const { return static_cast<T>(a); }
};

// An empty reduction gives 0/0 = nan for floating results.
template <class T>
struct Mean : Sum<T> {
  __device__ T project(typename Sum<T>::Acc a, int64_t count) const {
    return static_cast<T>(static_cast<double>(a) / static_cast<double>(count));
  }
};

// NaN wins (x != x only holds for NaN), like torch.amax / torch.amin.
template <class T>
struct Amax {
  using Acc = T;
  using Out = T;
  __device__ Acc identity() const { return lowest<T>(); }
  __device__ Acc make(T x, int64_t) const { return x; }
  __device__ Acc combine(Acc a, Acc b) const { return a != a ? a : b != b ? b : a > b ? a : b; }
  __device__ Out project(Acc a, int64_t) const { return a; }
};

template <class T>
struct Amin {
  using Acc = T;
  using Out = T;
  __device__ Acc identity() const { return highest<T>(); }
  __device__ Acc make(T x, int64_t) const { return x; }
  __device__ Acc combine(Acc a, Acc b) const { return a != a ? a : b != b ? b : a < b ? a : b; }
  __device__ Out project(Acc a, int64_t) const { return a; }
};

template <class T>
struct ValueIndex {
  T value;
  int64_t index;  // -1: no element yet
};

// The first maximum in row-major order; a NaN counts as the maximum.
template <class T>
struct Argmax {
  using Acc = ValueIndex<T>;
  using Out = int64_t;
  __device__ Acc identity() const { return Acc{T{}, -1}; }
  __device__ Acc make(T x, int64_t index) const { return Acc{x, index}; }
  __device__ Acc combine(Acc a, Acc b) const {
    if (a.index < 0 || b.index < 0) return a.index < 0 ? b : a;
    const bool a_nan = a.value != a.value, b_nan = b.value != b.value;
    bool a_wins;
    if (a_nan || b_nan)
      a_wins = a_nan && (!b_nan || a.index < b.index);
    else
      a_wins = a.value > b.value || (a.value == b.value && a.index < b.index);
    return a_wins ? a : b;
  }
  __device__ Out project(Acc a, int64_t) const { return a.index; }
};

template <class T, class Op>
__global__ void reduce_kernel(ReduceArgs args, const T* self, typename Op::Out* result, Op op) {
  using Acc = typename Op::Acc;
  __shared__ Acc partial[kThreads];
  for (int64_t out = blockIdx.x; out < args.nout; out += gridDim.x) {
    int64_t kept[2];
    args.kept.get(out, kept);
    Acc acc = op.identity();
    for (int64_t r = threadIdx.x; r < args.nreduced; r += blockDim.x) {
      int64_t offset[1];
      args.reduced.get(r, offset);
      acc = op.combine(acc, op.make(self[kept[0] + offset[0]], r));
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
      if (static_cast<int>(threadIdx.x) < half) partial[threadIdx.x] = op.combine(partial[threadIdx.x], partial[threadIdx.x + half]);
      __syncthreads();
    }
    if (threadIdx.x == 0) result[kept[1]] = op.project(partial[0], args.nreduced);
    __syncthreads();  // partial is reused by the next output
  }
}

template <class T, class Op>
void reduce(const TensorBase& result, const TensorBase& self, const char* what) {
  using Out = typename Op::Out;
  OP_CHECK(result.dtype() == scalar_type_of<Out>, what, ": result dtype ", to_string(result.dtype()), ", expected ",
           to_string(scalar_type_of<Out>));
  OP_CHECK(self.device().type() == DeviceType::CUDA && result.device().type() == DeviceType::CUDA, what,
           ": expected cuda tensors, got ", self.device().str(), " and ", result.device().str());
  const ReduceArgs args = plan(result, self, what);
  if (args.nout == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(args.nout, cuda::kMaxBlocks));
  reduce_kernel<T, Op><<<blocks, kThreads>>>(args, static_cast<const T*>(self.data_ptr()),
                                             static_cast<Out*>(result.data_ptr()), Op{});
  OP_CUDA_CHECK_LAUNCH();
}

void sum_kernel(const TensorBase& result, const TensorBase& self) {
  OP_DISPATCH_ALL_TYPES(self.dtype(), "sum", { reduce<scalar_t, Sum<scalar_t>>(result, self, "sum"); });
}
void mean_kernel(const TensorBase& result, const TensorBase& self) {
  OP_DISPATCH_ALL_TYPES(self.dtype(), "mean", { reduce<scalar_t, Mean<scalar_t>>(result, self, "mean"); });
}
void amax_kernel(const TensorBase& result, const TensorBase& self) {
  OP_DISPATCH_ALL_TYPES(self.dtype(), "amax", { reduce<scalar_t, Amax<scalar_t>>(result, self, "amax"); });
}
void amin_kernel(const TensorBase& result, const TensorBase& self) {
  OP_DISPATCH_ALL_TYPES(self.dtype(), "amin", { reduce<scalar_t, Amin<scalar_t>>(result, self, "amin"); });
}
void argmax_kernel(const TensorBase& result, const TensorBase& self) {
  OP_DISPATCH_ALL_TYPES(self.dtype(), "argmax", { reduce<scalar_t, Argmax<scalar_t>>(result, self, "argmax"); });
}

}  // namespace

OP_REGISTER_STUB(sum_stub, CUDA, &sum_kernel);
OP_REGISTER_STUB(mean_stub, CUDA, &mean_kernel);
OP_REGISTER_STUB(amax_stub, CUDA, &amax_kernel);
OP_REGISTER_STUB(amin_stub, CUDA, &amin_kernel);
OP_REGISTER_STUB(argmax_stub, CUDA, &argmax_kernel);

}  // namespace op::native
