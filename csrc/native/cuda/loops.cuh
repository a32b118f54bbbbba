// CUDA loops over strided tensors. gpu_kernel(iter, f) is the CUDA twin of
// TensorIteratorBase::for_each_element: each input read with its own dtype and converted to the
// compute type T, broadcast through stride 0, f's result converted to the output's dtype. An op
// is then a functor and one call:
//
//   struct Mul { template <class T> __device__ T operator()(T a, T b) const { return a * b; } };
//   OP_DISPATCH_ALL_TYPES(iter.common_dtype(), "mul", { gpu_kernel<scalar_t>(iter, Mul{}); });
//
// gpu_kernel_as<bool, T, T>(iter, f) reads each input as its own type (where's condition).
// Two kernels serve every call. When every operand is contiguous and already holds f's types
// (the common case: a + b on two float tensors), each thread moves kVec elements with vector
// loads and 32-bit indices. Otherwise sizes and strides travel to the kernel by value in an
// OffsetCalculator (no device allocation per launch): adjacent dimensions that are contiguous
// for every operand are merged first, and below 2^31 elements the index math is 32-bit
// division by multiplication (IntDivider). Launches go on the current stream (cuda_stream.h).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/scalar_type.h"
#include "core/tensor.h"
#include "core/tensor_iterator.h"
#include "native/cuda/cuda_check.h"
#include "native/cuda/cuda_context.h"
#include "native/cuda/cuda_stream.h"
#include "native/int_divider.h"
#include "native/stubs.h"

// Like OP_DISPATCH_ALL_TYPES, for ops defined on float32 and float64 only.
#define OP_CUDA_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...)                                          \
  do {                                                                                            \
    switch (TYPE) {                                                                               \
      OP_DTYPE_CASE(Float32, float, __VA_ARGS__)                                                  \
      OP_DTYPE_CASE(Float64, double, __VA_ARGS__)                                                 \
      default: ::op::fail(::op::str(NAME, ": unsupported dtype ", ::op::to_string(TYPE), " on cuda")); \
    }                                                                                             \
  } while (0)

namespace op::native::cuda {

constexpr int kMaxDims = 16;  // after merging; more is an op::Error
constexpr int kThreads = 256;
constexpr int kVec = 4;  // elements per thread in the contiguous kernel: one 16-byte load of float

// The calling thread's current stream, as the runtime API spells it.
inline cudaStream_t stream() { return static_cast<cudaStream_t>(op::cuda::current_stream()); }

// One thread per element, in blocks of kThreads; the x dimension of a grid holds 2^31 - 1 blocks,
// and the kernels' grid-stride loops cover anything beyond.
inline unsigned blocks_for(int64_t n, int64_t per_thread = 1) {
  const int64_t per_block = kThreads * per_thread;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((n + per_block - 1) / per_block, 0x7fffffff)));
}

using native::IntDivider;

// Element offsets of N operands for a row-major linear index.
template <int N>
struct OffsetCalculator {
  int ndim;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims][N];

  __device__ void get(int64_t linear, int64_t (&offsets)[N]) const {
    for (int k = 0; k < N; ++k) offsets[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t i = linear % sizes[d];
      linear /= sizes[d];
      for (int k = 0; k < N; ++k) offsets[k] += i * strides[d][k];
    }
  }
};

// The same walk in 32-bit arithmetic, for tensors whose linear indices and offsets fit in 31 bits.
template <int N>
struct OffsetCalculator32 {
  int ndim;
  IntDivider sizes[kMaxDims];
  int32_t strides[kMaxDims][N];

  __device__ void get(uint32_t linear, uint32_t (&offsets)[N]) const {
    for (int k = 0; k < N; ++k) offsets[k] = 0;
#pragma unroll 4
    for (int d = ndim - 1; d >= 0; --d) {
      const uint32_t outer = sizes[d].div(linear);
      const uint32_t i = linear - outer * sizes[d].divisor;
      linear = outer;
      for (int k = 0; k < N; ++k) offsets[k] += i * static_cast<uint32_t>(strides[d][k]);
    }
  }
};

// `strides[k]` has shape.size() entries for operand k. Size-1 dimensions are dropped and a
// dimension merges into the one outside it when every operand steps through both evenly, which
// keeps the row-major order of linear indices.
template <int N>
OffsetCalculator<N> make_offset_calculator(IntArrayRef shape, const std::array<std::vector<int64_t>, N>& strides) {
  OffsetCalculator<N> calc{};
  calc.ndim = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (calc.ndim > 0) {
      const int last = calc.ndim - 1;
      bool mergeable = true;
      for (int k = 0; k < N; ++k) mergeable = mergeable && calc.strides[last][k] == strides[k][d] * shape[d];
      if (mergeable) {
        calc.sizes[last] *= shape[d];
        for (int k = 0; k < N; ++k) calc.strides[last][k] = strides[k][d];
        continue;
      }
    }
    OP_CHECK(calc.ndim < kMaxDims, "CUDA: tensors with more than ", kMaxDims,
             " non-mergeable dimensions are not supported, got shape ", str_list(shape));
    calc.sizes[calc.ndim] = shape[d];
    for (int k = 0; k < N; ++k) calc.strides[calc.ndim][k] = strides[k][d];
    ++calc.ndim;
  }
  return calc;
}

// Whether every linear index below `numel` and every offset it reaches fit in 31 bits (strides
// are non-negative in this runtime's tensors; a negative one keeps the 64-bit walk).
template <int N>
bool fits_32_bits(const OffsetCalculator<N>& calc, int64_t numel) {
  constexpr int64_t kLimit = int64_t(1) << 31;
  if (numel >= kLimit) return false;
  for (int k = 0; k < N; ++k) {
    int64_t reach = 0;
    for (int d = 0; d < calc.ndim; ++d) {
      if (calc.strides[d][k] < 0) return false;
      reach += (calc.sizes[d] - 1) * calc.strides[d][k];
    }
    if (reach >= kLimit) return false;
  }
  return true;
}

template <int N>
OffsetCalculator32<N> narrow_to_32_bits(const OffsetCalculator<N>& calc) {
  OffsetCalculator32<N> narrow{};
  narrow.ndim = calc.ndim;
  for (int d = 0; d < calc.ndim; ++d) {
    narrow.sizes[d] = IntDivider(static_cast<uint32_t>(calc.sizes[d]));
    for (int k = 0; k < N; ++k) narrow.strides[d][k] = static_cast<int32_t>(calc.strides[d][k]);
  }
  return narrow;
}

// t's strides seen from `shape` (t broadcasts to it): leading and size-1 dimensions step by 0.
inline std::vector<int64_t> broadcast_strides(const TensorBase& t, IntArrayRef shape) {
  std::vector<int64_t> out(shape.size(), 0);
  const size_t lead = shape.size() - static_cast<size_t>(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) out[lead + d] = t.size(d) == 1 ? 0 : t.stride(d);
  return out;
}

// Reads element `offset` of memory holding `dtype` values, converted to T.
template <class T>
__device__ inline T load_as(const void* base, ScalarType dtype, int64_t offset) {
  switch (dtype) {
    case ScalarType::Bool: return static_cast<T>(static_cast<const bool*>(base)[offset]);
    case ScalarType::Int32: return static_cast<T>(static_cast<const int32_t*>(base)[offset]);
    case ScalarType::Int64: return static_cast<T>(static_cast<const int64_t*>(base)[offset]);
    case ScalarType::Float32: return static_cast<T>(static_cast<const float*>(base)[offset]);
    case ScalarType::Float64: return static_cast<T>(static_cast<const double*>(base)[offset]);
  }
  return T{};
}

template <class T>
__device__ inline void store_as(void* base, ScalarType dtype, int64_t offset, T value) {
  switch (dtype) {
    case ScalarType::Bool: static_cast<bool*>(base)[offset] = static_cast<bool>(value); break;
    case ScalarType::Int32: static_cast<int32_t*>(base)[offset] = static_cast<int32_t>(value); break;
    case ScalarType::Int64: static_cast<int64_t*>(base)[offset] = static_cast<int64_t>(value); break;
    case ScalarType::Float32: static_cast<float*>(base)[offset] = static_cast<float>(value); break;
    case ScalarType::Float64: static_cast<double*>(base)[offset] = static_cast<double>(value); break;
  }
}

// ----- elementwise launches -----

struct Operand {
  const void* data;
  ScalarType dtype;
};

template <int NIN>
struct ElementwiseArgs {
  void* out;
  ScalarType out_dtype;
  Operand in[NIN];
  // An input that is a 0-d cpu tensor (a number, for type promotion) travels by value: its
  // bytes, read like a one-element array of its dtype.
  int64_t constant[NIN];
  bool is_constant[NIN];
  int64_t numel;
};

template <class In, int NIN>
__device__ inline In load_input(const ElementwiseArgs<NIN>& args, int k, int64_t offset) {
  return args.is_constant[k] ? load_as<In>(&args.constant[k], args.in[k].dtype, 0)
                             : load_as<In>(args.in[k].data, args.in[k].dtype, offset);
}

template <class... Ins, class F, class Offset, size_t... I>
__device__ inline auto apply(const F& f, const ElementwiseArgs<sizeof...(Ins)>& args, const Offset* offsets,
                             std::index_sequence<I...>) {
  return f(load_input<Ins>(args, static_cast<int>(I), offsets[I + 1])...);
}

// The strided kernel: Calc is OffsetCalculator32 (Index uint32_t) or OffsetCalculator (int64_t).
template <class Index, class Calc, class F, class... Ins>
__global__ void elementwise_kernel(ElementwiseArgs<sizeof...(Ins)> args, Calc offsets, F f) {
  const Index numel = static_cast<Index>(args.numel);
  const Index step = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel; i += step) {
    Index o[sizeof...(Ins) + 1];
    offsets.get(i, o);
    store_as(args.out, args.out_dtype, o[0], apply<Ins...>(f, args, o, std::index_sequence_for<Ins...>{}));
  }
}

// kVec values of one operand, aligned so that a contiguous run loads and stores in one access.
template <class T>
struct alignas(sizeof(T) * kVec) Packet {
  T v[kVec];
};

// One input's packet, or its constant repeated.
template <class In, int NIN>
__device__ inline Packet<In> load_packet(const ElementwiseArgs<NIN>& args, int k, int64_t first, bool whole) {
  Packet<In> p{};
  if (args.is_constant[k]) {
    const In value = load_as<In>(&args.constant[k], args.in[k].dtype, 0);
#pragma unroll
    for (int j = 0; j < kVec; ++j) p.v[j] = value;
  } else if (whole) {
    p = *reinterpret_cast<const Packet<In>*>(static_cast<const In*>(args.in[k].data) + first);
  } else {
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      if (first + j < args.numel) p.v[j] = static_cast<const In*>(args.in[k].data)[first + j];
  }
  return p;
}

// A minimal heterogeneous pack for device code: one packet per input type.
template <size_t I, class T>
struct Slot {
  T value;
};
template <class Seq, class... Ts>
struct PackOf;
template <size_t... I, class... Ts>
struct PackOf<std::index_sequence<I...>, Ts...> : Slot<I, Ts>... {};
template <size_t I, class T>
__device__ inline const T& slot(const Slot<I, T>& s) {
  return s.value;
}

template <class... Ins, class F, size_t... I>
__device__ inline void contiguous_step(const ElementwiseArgs<sizeof...(Ins)>& args, const F& f, int64_t first, bool whole,
                                       std::index_sequence<I...>) {
  using Out = decltype(f(Ins{}...));
  const PackOf<std::index_sequence<I...>, Packet<Ins>...> in{{load_packet<Ins>(args, static_cast<int>(I), first, whole)}...};
  Packet<Out> out;
#pragma unroll
  for (int j = 0; j < kVec; ++j) out.v[j] = f(slot<I>(in).v[j]...);
  Out* target = static_cast<Out*>(args.out) + first;
  if (whole) {
    *reinterpret_cast<Packet<Out>*>(target) = out;
  } else {
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      if (first + j < args.numel) target[j] = out.v[j];
  }
}

// Every operand contiguous in f's own types: thread t handles elements [kVec t, kVec t + kVec).
// `aligned`: every pointer sits on a packet boundary, so whole packets load in one access.
template <class Index, class F, class... Ins>
__global__ void contiguous_kernel(ElementwiseArgs<sizeof...(Ins)> args, F f, bool aligned) {
  const Index numel = static_cast<Index>(args.numel);
  const Index step = static_cast<Index>(blockDim.x) * gridDim.x * kVec;
  for (Index first = (static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x) * kVec; first < numel; first += step)
    contiguous_step<Ins...>(args, f, first, aligned && first + kVec <= numel, std::index_sequence_for<Ins...>{});
}

// Whether a whole packet of `itemsize`-byte elements can load from p in one access.
inline bool on_packet_boundary(const void* p, size_t itemsize) {
  return reinterpret_cast<uintptr_t>(p) % (itemsize * kVec) == 0;
}

// out[i] = f(inputs[0][i], ...) over `shape`, input k read as type Ins_k (out has that shape,
// inputs broadcast to it). An input overlapping out in another layout could be read after it
// was overwritten: the result then goes through a buffer.
template <class... Ins, class F>
void elementwise(IntArrayRef shape, const TensorBase& out, const std::array<TensorBase, sizeof...(Ins)>& inputs, const F& f) {
  constexpr int n = static_cast<int>(sizeof...(Ins));
  using Out = decltype(std::declval<const F&>()(std::declval<Ins>()...));
  const int64_t numel = numel_of(shape);
  if (numel == 0) return;
  OP_CHECK(out.sizes() == shape, "CUDA loop: the output has shape ", str_list(out.sizes()), ", expected ",
           str_list(shape));
  OP_CHECK(out.device().type() == DeviceType::CUDA, "CUDA loop: the output is on ", out.device().str());
  TensorBase target = out;
  for (const TensorBase& in : inputs) {
    if (in.is_alias_of(out) &&
        (in.sizes() != out.sizes() || in.strides() != out.strides() || in.storage_offset() != out.storage_offset()))
      target = TensorBase::empty(shape, TensorOptions(out.dtype()).with_device(out.device()));
  }
  ElementwiseArgs<n> args{};
  std::array<std::vector<int64_t>, n + 1> strides;
  args.out = target.data_ptr();
  args.out_dtype = target.dtype();
  args.numel = numel;
  strides[0] = target.strides().vec();
  bool contiguous = target.is_contiguous() && target.dtype() == scalar_type_of<Out>;
  bool aligned = on_packet_boundary(args.out, sizeof(Out));
  const ScalarType in_dtypes[] = {scalar_type_of<Ins>...};
  for (int k = 0; k < n; ++k) {
    const TensorBase& in = inputs[k];
    if (in.dim() == 0 && in.device().is_cpu()) {
      in.check_host_data("CUDA loop");
      std::memcpy(&args.constant[k], in.data_ptr(), in.itemsize());
      args.is_constant[k] = true;
      args.in[k] = {nullptr, in.dtype()};
      strides[k + 1].assign(shape.size(), 0);
    } else {
      OP_CHECK(in.device().type() == DeviceType::CUDA, "CUDA loop: input ", k, " is on ", in.device().str());
      args.in[k] = {in.data_ptr(), in.dtype()};
      strides[k + 1] = broadcast_strides(in, shape);
      // Same element count and contiguous: the input walks in step with the output.
      contiguous = contiguous && in.numel() == numel && in.is_contiguous() && in.dtype() == in_dtypes[k];
      aligned = aligned && on_packet_boundary(in.data_ptr(), in.itemsize());
    }
  }
  const cudaStream_t s = stream();
  if (contiguous) {
    if (numel < (int64_t(1) << 31) - kThreads * kVec)
      contiguous_kernel<uint32_t, F, Ins...><<<blocks_for(numel, kVec), kThreads, 0, s>>>(args, f, aligned);
    else
      contiguous_kernel<int64_t, F, Ins...><<<blocks_for(numel, kVec), kThreads, 0, s>>>(args, f, aligned);
  } else {
    const OffsetCalculator<n + 1> calc = make_offset_calculator<n + 1>(shape, strides);
    if (fits_32_bits(calc, numel))
      elementwise_kernel<uint32_t, OffsetCalculator32<n + 1>, F, Ins...><<<blocks_for(numel), kThreads, 0, s>>>(
          args, narrow_to_32_bits(calc), f);
    else
      elementwise_kernel<int64_t, OffsetCalculator<n + 1>, F, Ins...><<<blocks_for(numel), kThreads, 0, s>>>(args, calc, f);
  }
  OP_CUDA_CHECK_LAUNCH();
  if (target.unsafe_impl() != out.unsafe_impl()) copy_stub(DeviceType::CUDA, out, target);
}

// f(x) = x: a copy that converts between dtypes and layouts.
struct Identity {
  template <class T>
  __device__ T operator()(T x) const { return x; }
};

// How many T arguments f takes (1 to 3).
template <class T, class F>
constexpr size_t arity() {
  if constexpr (std::is_invocable_v<const F&, T>)
    return 1;
  else if constexpr (std::is_invocable_v<const F&, T, T>)
    return 2;
  else {
    static_assert(std::is_invocable_v<const F&, T, T, T>, "gpu_kernel: f must take one T per input (1 to 3)");
    return 3;
  }
}

// Runs f over a TensorIteratorBase built by meta(), input k read as Ins_k: e.g. where's
// gpu_kernel_as<bool, T, T>.
template <class... Ins, class F>
void gpu_kernel_as(const TensorIteratorBase& iter, const F& f) {
  constexpr size_t n = sizeof...(Ins);
  OP_CHECK(iter.ninputs() == static_cast<int64_t>(n), "gpu_kernel: the function takes ", n, " values but there are ",
           iter.ninputs(), " inputs");
  std::array<TensorBase, n> inputs;
  for (size_t k = 0; k < n; ++k) inputs[k] = iter.input(static_cast<int64_t>(k));
  elementwise<Ins...>(iter.shape(), iter.output(0), inputs, f);
}

template <class T, size_t>
using Repeat = T;

template <class T, class F, size_t... I>
void gpu_kernel_repeated(const TensorIteratorBase& iter, const F& f, std::index_sequence<I...>) {
  gpu_kernel_as<Repeat<T, I>...>(iter, f);
}

// Every input read as T, normally common_dtype()'s C++ type.
template <class T, class F>
void gpu_kernel(const TensorIteratorBase& iter, const F& f) {
  gpu_kernel_repeated<T>(iter, f, std::make_index_sequence<arity<T, F>()>{});
}

}  // namespace op::native::cuda
