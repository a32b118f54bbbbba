// CUDA loops of the reduction stubs (sum, mean, amax, amin, argmax). `result` has self's rank
// with size 1 where self is reduced. The shape of the work (native/reduce_plan.h) follows where
// self's unit-stride dimension lies:
//   along rows   (the reduced elements are adjacent, or every element is reduced): a warp per
//                output when there are enough outputs to fill the GPU with warps, else a block,
//                its threads striding through the reduced elements together;
//   along columns (the kept elements are adjacent): a thread per output (or per packet of
//                kVec outputs, read with one access) in a warp-wide row of outputs,
//                kRowsPerColumn threads per output splitting the reduced elements.
// Either way, when there are too few outputs to fill the GPU the reduced elements are split
// among several blocks (grid.y) that write partial results to a workspace, and a second launch
// folds each output's partials.
#include <math.h>
#include <string.h>

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

// The rows kernels' fold when the reduced elements of a row are adjacent: the `width` threads
// of the row (this one is `lane` among them) read whole packets (kVec elements, one 16-byte
// access for float), four packets in flight; the elements before the first packet boundary and
// after the last one are read one per thread.
template <class T, class Op>
__device__ typename Op::Acc fold_adjacent(const T* row, int64_t begin, int64_t end, int lane, int width, const Op& op) {
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
  for (int64_t r = begin + lane; r < first_packet; r += width) acc[0] = op.combine(acc[0], op.make(row[r], r));
  for (int64_t r = after + lane; r < end; r += width) acc[1] = op.combine(acc[1], op.make(row[r], r));
  const Packet<T>* packet = reinterpret_cast<const Packet<T>*>(row + first_packet);
  int64_t q = lane;
  for (; q + (kInFlight - 1) * width < packets; q += kInFlight * width) {
    Packet<T> v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) v[j] = packet[q + j * width];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j)
#pragma unroll
      for (int e = 0; e < kVec; ++e) acc[j] = op.combine(acc[j], op.make(v[j].v[e], first_packet + (q + j * width) * kVec + e));
  }
  for (; q < packets; q += width) {
    const Packet<T> v = packet[q];
#pragma unroll
    for (int e = 0; e < kVec; ++e) acc[2] = op.combine(acc[2], op.make(v.v[e], first_packet + q * kVec + e));
  }
  return op.combine(op.combine(acc[0], acc[1]), op.combine(acc[2], acc[3]));
}

constexpr int kWarp = ReduceBlock::kWarp;
constexpr int kWarps = ReduceBlock::kWarps;
constexpr int kColumns = ReduceBlock::kColumns;
constexpr int kRowsPerColumn = ReduceBlock::kRowsPerColumn;
static_assert(ReduceBlock::kThreads == kThreads, "the plan and the kernels agree on the block size");
static_assert(ReduceBlock::kPacket == cuda::kVec, "the plan and the kernels agree on the packet");

// `value` from the lane `offset` away (lane ^ offset), for any accumulator: the hardware
// shuffles 32-bit words, so wider or compound ones (double, a value and its index) go word by word.
template <class A>
__device__ A shuffle_xor(const A& value, int offset) {
  constexpr int kWords = (sizeof(A) + 3) / 4;
  unsigned words[kWords] = {};
  memcpy(words, &value, sizeof(A));
#pragma unroll
  for (int w = 0; w < kWords; ++w) words[w] = __shfl_xor_sync(0xffffffffu, words[w], offset);
  A out;
  memcpy(&out, words, sizeof(A));
  return out;
}

// Folds one value per lane of a warp; every lane gets the result (combine is commutative).
template <class Op>
__device__ typename Op::Acc fold_warp(typename Op::Acc acc, const Op& op) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) acc = op.combine(acc, shuffle_xor(acc, offset));
  return acc;
}

// Folds one value per thread of the block: each warp with shuffles, then the warps' results
// (`shared` holds kWarps of them). Every warp folds those, so every thread meets the same
// shuffles; the result is thread 0's.
template <class Op>
__device__ typename Op::Acc fold_block(typename Op::Acc* shared, typename Op::Acc acc, const Op& op) {
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  acc = fold_warp(acc, op);
  if (lane == 0) shared[warp] = acc;
  __syncthreads();
  return fold_warp(lane < kWarps ? shared[lane] : op.identity(), op);
}

// Folds the kRowsPerColumn values of each column (thread x + kColumns * y holds row y of
// column x; `shared` holds kThreads values). The result is row 0's.
template <class Op>
__device__ typename Op::Acc fold_column(typename Op::Acc* shared, typename Op::Acc acc, const Op& op) {
  shared[threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x < kColumns)
    for (int y = 1; y < kRowsPerColumn; ++y) acc = op.combine(acc, shared[threadIdx.x + y * kColumns]);
  return acc;
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

__device__ inline bool rows_adjacent(const ReduceArgs& args) {
  return args.reduced.ndim == 1 && args.reduced.strides[0][0] == 1;
}

// Block rows: block x folds output `blockIdx.x` (grid-stride), all kThreads threads together.
template <class T, class Op>
__global__ void reduce_block_rows_kernel(ReduceArgs args, const T* self, Sink<Op> sink, Op op) {
  using Acc = typename Op::Acc;
  __shared__ Acc shared[kWarps];
  int64_t begin, end;
  split_range(args.nreduced, begin, end);
  const bool adjacent = rows_adjacent(args);
  for (int64_t out = blockIdx.x; out < args.nout; out += gridDim.x) {
    int64_t kept[2];
    args.kept.get(out, kept);
    Acc acc = adjacent ? fold_adjacent(self + kept[0], begin, end, threadIdx.x, kThreads, op)
                       : fold_strided(args, self + kept[0], begin + threadIdx.x, end, kThreads, op);
    acc = fold_block(shared, acc, op);
    if (threadIdx.x == 0) emit(sink, args, op, out, kept[1], acc);
    __syncthreads();  // shared is reused by the next output
  }
}

// Warp rows: warp w of block x folds output kWarps * x + w (grid-stride), no split. A warp's
// lanes share their output, so they run the same iterations and meet every shuffle together.
template <class T, class Op>
__global__ void reduce_warp_rows_kernel(ReduceArgs args, const T* self, Sink<Op> sink, Op op) {
  using Acc = typename Op::Acc;
  const int lane = threadIdx.x % kWarp;
  const bool adjacent = rows_adjacent(args);
  const int64_t step = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t out = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / kWarp; out < args.nout; out += step) {
    int64_t kept[2];
    args.kept.get(out, kept);
    Acc acc = adjacent ? fold_adjacent(self + kept[0], 0, args.nreduced, lane, kWarp, op)
                       : fold_strided(args, self + kept[0], lane, args.nreduced, kWarp, op);
    acc = fold_warp(acc, op);
    if (lane == 0) emit(sink, args, op, out, kept[1], acc);
  }
}

// Columns: thread (x, y) folds output blockIdx.x * kColumns + x over every kRowsPerColumn-th
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
    Acc acc = out < args.nout ? fold_strided(args, self + kept[0], begin + y, end, kRowsPerColumn, op) : op.identity();
    acc = fold_column(shared, acc, op);
    if (y == 0 && out < args.nout) emit(sink, args, op, out, kept[1], acc);
    __syncthreads();
  }
}

// Packet columns: as columns, each thread folding kVec adjacent outputs read as one packet per
// reduced element (the launch checks that every packet is aligned: the innermost kept size and
// every stride of self are multiples of kVec, self on a packet boundary).
template <class T, class Op>
__global__ void reduce_packet_columns_kernel(ReduceArgs args, const T* self, Sink<Op> sink, Op op) {
  using Acc = typename Op::Acc;
  using cuda::kVec;
  using cuda::Packet;
  constexpr int kInFlight = 4;
  __shared__ Acc shared[kThreads];
  int64_t begin, end;
  split_range(args.nreduced, begin, end);
  const int64_t stride = args.reduced.ndim == 0 ? 0 : args.reduced.strides[0][0];
  const int64_t result_step = args.kept.strides[args.kept.ndim - 1][1];  // between adjacent outputs
  const int64_t groups = args.nout / kVec;
  const int x = threadIdx.x % kColumns, y = threadIdx.x / kColumns;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * kColumns; first < groups; first += static_cast<int64_t>(gridDim.x) * kColumns) {
    const int64_t group = first + x;
    Acc acc[kVec];
#pragma unroll
    for (int e = 0; e < kVec; ++e) acc[e] = op.identity();
    int64_t kept[2] = {0, 0};
    if (group < groups) {
      args.kept.get(group * kVec, kept);
      const T* base = self + kept[0];
      int64_t r = begin + y;
      for (; r + (kInFlight - 1) * kRowsPerColumn < end; r += kInFlight * kRowsPerColumn) {
        Packet<T> v[kInFlight];
#pragma unroll
        for (int j = 0; j < kInFlight; ++j) v[j] = *reinterpret_cast<const Packet<T>*>(base + (r + j * kRowsPerColumn) * stride);
#pragma unroll
        for (int j = 0; j < kInFlight; ++j)
#pragma unroll
          for (int e = 0; e < kVec; ++e) acc[e] = op.combine(acc[e], op.make(v[j].v[e], r + j * kRowsPerColumn));
      }
      for (; r < end; r += kRowsPerColumn) {
        const Packet<T> v = *reinterpret_cast<const Packet<T>*>(base + r * stride);
#pragma unroll
        for (int e = 0; e < kVec; ++e) acc[e] = op.combine(acc[e], op.make(v.v[e], r));
      }
    }
    for (int e = 0; e < kVec; ++e) {
      const Acc folded = fold_column(shared, acc[e], op);
      if (y == 0 && group < groups) emit(sink, args, op, group * kVec + e, kept[1] + e * result_step, folded);
      __syncthreads();
    }
  }
}

template <class Op>
__device__ inline void emit_result(const ReduceArgs& args, typename Op::Out* result, int64_t out, typename Op::Acc acc,
                                   const Op& op) {
  int64_t kept[2];
  args.kept.get(out, kept);
  result[kept[1]] = op.project(acc, args.nreduced);
}

// The second pass for few outputs: block x folds output x's `splits` partials.
template <class Op>
__global__ void fold_partials_by_block_kernel(ReduceArgs args, const typename Op::Acc* partials, int splits,
                                              typename Op::Out* result, Op op) {
  using Acc = typename Op::Acc;
  __shared__ Acc shared[kWarps];
  for (int64_t out = blockIdx.x; out < args.nout; out += gridDim.x) {
    Acc acc = op.identity();
    for (int s = threadIdx.x; s < splits; s += kThreads) acc = op.combine(acc, partials[static_cast<int64_t>(s) * args.nout + out]);
    acc = fold_block(shared, acc, op);
    if (threadIdx.x == 0) emit_result(args, result, out, acc, op);
    __syncthreads();
  }
}

// The second pass for many outputs: [splits][nout] is itself a reduction along columns, the
// partials of adjacent outputs adjacent; thread (x, y) folds every kRowsPerColumn-th split.
template <class Op>
__global__ void fold_partials_by_column_kernel(ReduceArgs args, const typename Op::Acc* partials, int splits,
                                               typename Op::Out* result, Op op) {
  using Acc = typename Op::Acc;
  __shared__ Acc shared[kThreads];
  const int x = threadIdx.x % kColumns, y = threadIdx.x / kColumns;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * kColumns; first < args.nout; first += static_cast<int64_t>(gridDim.x) * kColumns) {
    const int64_t out = first + x;
    Acc acc = op.identity();
    if (out < args.nout)
      for (int s = y; s < splits; s += kRowsPerColumn) acc = op.combine(acc, partials[static_cast<int64_t>(s) * args.nout + out]);
    acc = fold_column(shared, acc, op);
    if (y == 0 && out < args.nout) emit_result(args, result, out, acc, op);
    __syncthreads();
  }
}

// Whether every packet the packet-columns kernel reads is aligned: see that kernel.
template <class T>
bool packets_fit(const ReduceArgs& args, const T* data) {
  if (args.reduced.ndim != 1 || args.kept.ndim == 0 || !cuda::on_packet_boundary(data, sizeof(T))) return false;
  if (args.kept.sizes[args.kept.ndim - 1] % cuda::kVec != 0 || args.reduced.strides[0][0] % cuda::kVec != 0) return false;
  for (int d = 0; d < args.kept.ndim - 1; ++d)
    if (args.kept.strides[d][0] % cuda::kVec != 0) return false;
  return true;
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
  const T* data = static_cast<const T*>(self.data_ptr());
  // Along columns when the kept elements are the adjacent ones and there is more than one.
  const bool along_columns = args.nout > 1 && args.kept.ndim > 0 && args.kept.strides[args.kept.ndim - 1][0] == 1 &&
                             !(args.reduced.ndim > 0 && args.reduced.strides[args.reduced.ndim - 1][0] == 1);
  const ReduceAxis axis = !along_columns          ? ReduceAxis::kRows
                          : packets_fit(args, data) ? ReduceAxis::kPacketColumns
                                                    : ReduceAxis::kColumns;
  const ReducePlan p = plan_reduction(args.nout, args.nreduced, axis, op::cuda::multiprocessor_count());
  const cudaStream_t s = cuda::stream();
  Sink<Op> sink{static_cast<Out*>(result.data_ptr()), nullptr};
  TensorBase workspace;
  if (p.splits > 1) {
    const int64_t bytes = static_cast<int64_t>(sizeof(Acc)) * p.splits * args.nout;
    workspace = TensorBase::empty({(bytes + 7) / 8}, TensorOptions(ScalarType::Int64).with_device(self.device()));
    sink.partials = static_cast<Acc*>(workspace.data_ptr());
  }
  const dim3 grid(p.blocks, static_cast<unsigned>(p.splits));
  switch (p.layout) {
    case ReduceLayout::kBlockRows: reduce_block_rows_kernel<T, Op><<<grid, kThreads, 0, s>>>(args, data, sink, Op{}); break;
    case ReduceLayout::kWarpRows: reduce_warp_rows_kernel<T, Op><<<grid, kThreads, 0, s>>>(args, data, sink, Op{}); break;
    case ReduceLayout::kColumns: reduce_columns_kernel<T, Op><<<grid, kThreads, 0, s>>>(args, data, sink, Op{}); break;
    case ReduceLayout::kPacketColumns:
      reduce_packet_columns_kernel<T, Op><<<grid, kThreads, 0, s>>>(args, data, sink, Op{});
      break;
  }
  OP_CUDA_CHECK_LAUNCH();
  if (p.splits > 1) {
    if (fold_partials_along_columns(args.nout)) {
      const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((args.nout + kColumns - 1) / kColumns, 0x7fffffff));
      fold_partials_by_column_kernel<Op><<<blocks, kThreads, 0, s>>>(args, sink.partials, p.splits, sink.result, Op{});
    } else {
      const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(args.nout, 0x7fffffff));
      fold_partials_by_block_kernel<Op><<<blocks, kThreads, 0, s>>>(args, sink.partials, p.splits, sink.result, Op{});
    }
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
