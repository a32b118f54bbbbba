// CUDA loops of the factory stubs: fill_, arange, uniform_ and normal_. Element i (row-major)
// of uniform_ / normal_ takes counter offset + i of the Philox stream in random_counter.h,
// the same function the CPU loops call, so both devices draw the same values.
#include <type_traits>

#include "native/cuda/loops.cuh"
#include "native/random_counter.h"
#include "native/stubs.h"

namespace op::native {

namespace {

using cuda::blocks_for;
using cuda::kThreads;
using cuda::OffsetCalculator;

// out[offset of element i] = value_of(i) over a strided tensor of T.
template <class T, class ValueOf>
__global__ void write_kernel(T* out, OffsetCalculator<1> offsets, int64_t numel, ValueOf value_of) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel; i += step) {
    int64_t o[1];
    offsets.get(i, o);
    out[o[0]] = value_of(i);
  }
}

template <class T, class ValueOf>
void write_each(const TensorBase& self, const char* what, ValueOf value_of) {
  OP_CHECK(self.device().type() == DeviceType::CUDA, what, ": expected a cuda tensor, got one on ",
           self.device().str());
  const int64_t n = self.numel();
  if (n == 0) return;
  const std::array<std::vector<int64_t>, 1> strides = {self.strides().vec()};
  write_kernel<T><<<blocks_for(n), kThreads, 0, cuda::stream()>>>(static_cast<T*>(self.data_ptr()),
                                               cuda::make_offset_calculator<1>(self.sizes(), strides), n, value_of);
  OP_CUDA_CHECK_LAUNCH();
}

template <class T>
struct Constant {
  T value;
  __device__ T operator()(int64_t) const { return value; }
};

// Floating outputs compute in double, integral ones in int64, like the CPU loop.
template <class T>
struct Ramp {
  using acc_t = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  acc_t start, step;
  __device__ T operator()(int64_t i) const { return static_cast<T>(start + static_cast<acc_t>(i) * step); }
};

template <class T>
struct Uniform {
  uint64_t seed, offset;
  double from, to;
  __device__ T operator()(int64_t i) const { return rng::uniform_value<T>(seed, offset + static_cast<uint64_t>(i), from, to); }
};

template <class T>
struct Normal {
  uint64_t seed, offset;
  double mean, std;
  __device__ T operator()(int64_t i) const { return rng::normal_value<T>(seed, offset + static_cast<uint64_t>(i), mean, std); }
};

void fill_kernel(const TensorBase& self, const Scalar& value) {
  OP_DISPATCH_ALL_TYPES(self.dtype(), "fill_", { write_each<scalar_t>(self, "fill_", Constant<scalar_t>{value.to<scalar_t>()}); });
}

void arange_kernel(const TensorBase& out, const Scalar& start, const Scalar& step) {
  OP_DISPATCH_ALL_TYPES(out.dtype(), "arange", {
    using acc_t = typename Ramp<scalar_t>::acc_t;
    write_each<scalar_t>(out, "arange", Ramp<scalar_t>{start.to<acc_t>(), step.to<acc_t>()});
  });
}

void uniform_kernel(const TensorBase& self, double from, double to, uint64_t seed, uint64_t offset) {
  OP_CUDA_DISPATCH_FLOATING_TYPES(self.dtype(), "uniform_", {
    write_each<scalar_t>(self, "uniform_", Uniform<scalar_t>{seed, offset, from, to});
  });
}

void normal_kernel(const TensorBase& self, double mean, double std, uint64_t seed, uint64_t offset) {
  OP_CUDA_DISPATCH_FLOATING_TYPES(self.dtype(), "normal_", {
    write_each<scalar_t>(self, "normal_", Normal<scalar_t>{seed, offset, mean, std});
  });
}

}  // namespace

OP_REGISTER_STUB(fill_stub, CUDA, &fill_kernel);
OP_REGISTER_STUB(arange_stub, CUDA, &arange_kernel);
OP_REGISTER_STUB(uniform_stub, CUDA, &uniform_kernel);
OP_REGISTER_STUB(normal_stub, CUDA, &normal_kernel);

}  // namespace op::native
