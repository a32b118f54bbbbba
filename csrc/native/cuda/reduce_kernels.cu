// CUDA loops of the reduction stubs (sum, mean, amax, amin, argmax). `result` has self's rank
// with size 1 where self is reduced. Two shapes of work, chosen by where self's unit-stride
// dimension lies:
//   along rows   (the reduced elements are adjacent, or every element is reduced): a block per
//                output, its threads striding through the reduced elements together;
//   along columns (the kept elements are adjacent): a thread per output in a warp-wide row of
//                outputs, kRowsPerBlock threads per output splitting the reduced elements.
// Either way, when there are too few outputs to fill the GPU the reduced elements are split
// among several blocks (grid.y) that write partial results to a workspace, and a second launch
// folds each output's partials.
#include <math.h>

#include <type_traits>

#include "native/cuda/loops.cuh"
#include "native/reduce_plan.h"
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

// Element r of the reduced range: one multiply when the reduced dimensions merged into one.
__device__ inline int64_t reduced_offset(const ReduceArgs& args, int64_t r) {
  if (args.reduced.ndim <= 1) return args.reduced.ndim == 0 ? 0 : r * args.reduced.strides[0][0];
  int64_t o[1];
  args.reduced.get(r, o);
  return o[0];
}

// One thread's fold of reduced elements first, first + step, ... below end. Four elements are
// read before any is folded, into four accumulators, so four loads are in flight at once (a
// single chain of load-then-combine waits out the memory latency at every element). combine is
// associative and breaks ties by index, so the order of folding changes no result but a
// floating sum's rounding.
template <class T, class Op>
__device__ typename Op::Acc fold_strided(const ReduceArgs& args, const T* base, int64_t first, int64_t end, int64_t step,
                                         const Op& op) {
  using Acc = typename Op::Acc;
  constexpr int kInFlight = 4;
  Acc acc[kInFlight];
#pragma unroll
  for (int j = 0; j < kInFlight; ++j) acc[j] = op.identity();
  int64_t r = first;
  if (args.reduced.ndim <= 1) {  // one stride: no division per element
    const int64_t stride = args.reduced.ndim == 0 ? 0 : args.reduced.strides[0][0];
    for (; r + (kInFlight - 1) * step < end; r += kInFlight * step) {
      T v[kInFlight];
#pragma unroll
      for (int j = 0; j < kInFlight; ++j) v[j] = base[(r + j * step) * stride];
#pragma unroll
      for (int j = 0; j < kInFlight; ++j) acc[j] = op.combine(acc[j], op.make(v[j], r + j * step));
    }
  }
  for (; r < end; r += step) acc[0] = op.combine(acc[0], op.make(base[reduced_offset(args, r)], r));
  return op.combine(op.combine(acc[0], acc[1]), op.combine(acc[2], acc[3]));
}

// The rows kernel's fold when the reduced elements of a row are adjacent: every thread reads
// whole packets (kVec elements, one 16-byte access for float), four packets in flight; the
// elements before the first packet boundary and after the last one are read one per thread.
template <class T, class Op>
__device__ typename Op::Acc fold_adjacent(const T* row, int64_t begin, int64_t end, const Op& op) {
  using Acc = typename Op::Acc;
  using cuda::kVec;
  using cuda::Packet;
  constexpr int kInFlight = 4;
  Acc acc[kInFlight];
#pragma unroll
  for (int j = 0; j < kInFlight; ++j) acc[j] = op.identity();
  // The first index at or after `begin` whose address is a packet boundary (a row starts on an
  // element boundary, so only the element count matters).
  const int64_t shift = static_cast<int64_t>((reinterpret_cast<uintptr_t>(row) / sizeof(T)) % kVec);
  int64_t first_packet = begin + (kVec - (shift + begin) % kVec) % kVec;
  if (first_packet > end) first_packet = end;
  const int64_t packets = (end - first_packet) / kVec;
  const int64_t after = first_packet + packets * kVec;
  for (int64_t r = begin + threadIdx.x; r < first_packet; r += kThreads) acc[0] = op.combine(acc[0], op.make(row[r], r));
  for (int64_t r = after + threadIdx.x; r < end; r += kThreads) acc[1] = op.combine(acc[1], op.make(row[r], r));
  const Packet<T>* packet = reinterpret_cast<const Packet<T>*>(row + first_packet);
  int64_t q = threadIdx.x;
  for (; q + (kInFlight - 1) * kThreads < packets; q += kInFlight * kThreads) {
    Packet<T> v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) v[j] = packet[q + j * kThreads];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j)
#pragma unroll
      for (int e = 0; e < kVec; ++e) acc[j] = op.combine(acc[j], op.make(v[j].v[e], first_packet + (q + j * kThreads) * kVec + e));
  }
  for (; q < packets; q += kThreads) {
    const Packet<T> v = packet[q];
#pragma unroll
    for (int e = 0; e < kVec; ++e) acc[2] = op.combine(acc[2], op.make(v.v[e], first_packet + q * kVec + e));
  }
  return op.combine(op.combine(acc[0], acc[1]), op.combine(acc[2], acc[3]));
}

// Folds one value per thread of the block into thread 0's `acc` (the shared array holds
// blockDim.x entries, each thread's `lane` among those folded together in `group` threads).
template <class Op>
__device__ typename Op::Acc fold_in_shared(typename Op::Acc* shared, typename Op::Acc acc, int index, int group,
                                           int stride, const Op& op) {
  shared[index] = acc;
  __syncthreads();
  for (int half = group / 2; half > 0; half /= 2) {
    const int lane = index / stride;  // position within the group
    if (lane < half && lane + half < group) shared[index] = op.combine(shared[index], shared[index + half * stride]);
    __syncthreads();
  }
  return shared[index];
}

// Where a block's work writes: the result (one split) or the workspace of partials.
template <class Op>
struct Sink {
  typename Op::Out* result;
  typename Op::Acc* partials;  // [splits][nout], or nullptr with one split
};

template <class Op>
__device__ inline void emit(const Sink<Op>& sink, const ReduceArgs& args, const Op& op, int64_t out, int64_t result_offset,
                            typename Op::Acc acc) {
  if (sink.partials)
    sink.partials[static_cast<int64_t>(blockIdx.y) * args.nout + out] = acc;
  else
    sink.result[result_offset] = op.project(acc, args.nreduced);
}

// The range of reduced elements split `blockIdx.y` of gridDim.y covers.
__device__ inline void split_range(int64_t nreduced, int64_t& begin, int64_t& end) {
  const int64_t chunk = (nreduced + gridDim.y - 1) / gridDim.y;
  begin = static_cast<int64_t>(blockIdx.y) * chunk;
  end = begin + chunk < nreduced ? begin + chunk : nreduced;
}

// Along rows: block x folds output `blockIdx.x` (grid-stride), all kThreads threads together.
template <class T, class Op>
__global__ void reduce_rows_kernel(ReduceArgs args, const T* self, Sink<Op> sink, Op op) {
  using Acc = typename Op::Acc;
  __shared__ Acc shared[kThreads];
  int64_t begin, end;
  split_range(args.nreduced, begin, end);
  const bool adjacent = args.reduced.ndim == 1 && args.reduced.strides[0][0] == 1;
  for (int64_t out = blockIdx.x; out < args.nout; out += gridDim.x) {
    int64_t kept[2];
    args.kept.get(out, kept);
    Acc acc = adjacent ? fold_adjacent(self + kept[0], begin, end, op)
                       : fold_strided(args, self + kept[0], begin + threadIdx.x, end, kThreads, op);
    acc = fold_in_shared(shared, acc, threadIdx.x, kThreads, 1, op);
    if (threadIdx.x == 0) emit(sink, args, op, out, kept[1], acc);
    __syncthreads();  // shared is reused by the next output
  }
}

constexpr int kColumns = ReduceBlock::kColumns;
constexpr int kRowsPerBlock = ReduceBlock::kRowsPerColumn;
static_assert(ReduceBlock::kThreads == kThreads, "the plan and the kernels agree on the block size");

// Along columns: thread (x, y) folds output blockIdx.x * kColumns + x over every kRowsPerBlock-th
// reduced element of its split, then the y threads of each column fold together.
template <class T, class Op>
__global__ void reduce_columns_kernel(ReduceArgs args, const T* self, Sink<Op> sink, Op op) {
  using Acc = typename Op::Acc;
  __shared__ Acc shared[kThreads];
  int64_t begin, end;
  split_range(args.nreduced, begin, end);
  const int x = threadIdx.x % kColumns, y = threadIdx.x / kColumns;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * kColumns; first < args.nout; first += static_cast<int64_t>(gridDim.x) * kColumns) {
    const int64_t out = first + x;
    int64_t kept[2] = {0, 0};
    if (out < args.nout) args.kept.get(out, kept);
    Acc acc = out < args.nout ? fold_strided(args, self + kept[0], begin + y, end, kRowsPerBlock, op) : op.identity();
    // Column x's threads sit kColumns apart in `shared`.
    acc = fold_in_shared(shared, acc, threadIdx.x, kRowsPerBlock, kColumns, op);
    if (y == 0 && out < args.nout) emit(sink, args, op, out, kept[1], acc);
    __syncthreads();
  }
}

// The second pass: block x folds output x's `splits` partials.
template <class Op>
__global__ void fold_partials_kernel(ReduceArgs args, const typename Op::Acc* partials, int splits,
                                     typename Op::Out* result, Op op) {
  using Acc = typename Op::Acc;
  __shared__ Acc shared[kThreads];
  for (int64_t out = blockIdx.x; out < args.nout; out += gridDim.x) {
    Acc acc = op.identity();
    for (int s = threadIdx.x; s < splits; s += kThreads) acc = op.combine(acc, partials[static_cast<int64_t>(s) * args.nout + out]);
    acc = fold_in_shared(shared, acc, threadIdx.x, kThreads, 1, op);
    if (threadIdx.x == 0) {
      int64_t kept[2];
      args.kept.get(out, kept);
      result[kept[1]] = op.project(acc, args.nreduced);
    }
    __syncthreads();
  }
}

template <class T, class Op>
void reduce(const TensorBase& result, const TensorBase& self, const char* what) {
  using Out = typename Op::Out;
  using Acc = typename Op::Acc;
  OP_CHECK(result.dtype() == scalar_type_of<Out>, what, ": result dtype ", to_string(result.dtype()), ", expected ",
           to_string(scalar_type_of<Out>));
  OP_CHECK(self.device().type() == DeviceType::CUDA && result.device().type() == DeviceType::CUDA, what,
           ": expected cuda tensors, got ", self.device().str(), " and ", result.device().str());
  const ReduceArgs args = plan(result, self, what);
  if (args.nout == 0) return;
  // Along columns when the kept elements are the adjacent ones and there is more than one.
  const bool along_columns = args.nout > 1 && args.kept.ndim > 0 && args.kept.strides[args.kept.ndim - 1][0] == 1 &&
                             !(args.reduced.ndim > 0 && args.reduced.strides[args.reduced.ndim - 1][0] == 1);
  const ReducePlan p = plan_reduction(args.nout, args.nreduced, along_columns, op::cuda::multiprocessor_count());
  const cudaStream_t s = cuda::stream();
  Sink<Op> sink{static_cast<Out*>(result.data_ptr()), nullptr};
  TensorBase workspace;
  if (p.splits > 1) {
    const int64_t bytes = static_cast<int64_t>(sizeof(Acc)) * p.splits * args.nout;
    workspace = TensorBase::empty({(bytes + 7) / 8}, TensorOptions(ScalarType::Int64).with_device(self.device()));
    sink.partials = static_cast<Acc*>(workspace.data_ptr());
  }
  const dim3 grid(p.blocks, static_cast<unsigned>(p.splits));
  const T* data = static_cast<const T*>(self.data_ptr());
  if (p.along_columns)
    reduce_columns_kernel<T, Op><<<grid, kThreads, 0, s>>>(args, data, sink, Op{});
  else
    reduce_rows_kernel<T, Op><<<grid, kThreads, 0, s>>>(args, data, sink, Op{});
  OP_CUDA_CHECK_LAUNCH();
  if (p.splits > 1) {
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(args.nout, 0x7fffffff));
    fold_partials_kernel<Op><<<blocks, kThreads, 0, s>>>(args, sink.partials, p.splits, sink.result, Op{});
    OP_CUDA_CHECK_LAUNCH();
  }
  // `workspace` returns to the caching allocator here; the stream orders its reuse after the fold.
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
