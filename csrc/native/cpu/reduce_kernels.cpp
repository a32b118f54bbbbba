// CPU loops of the reductions (sum_stub, mean_stub, amax_stub, amin_stub, argmax_stub).
//
// The input is brought into a contiguous layout (free when it already is; for sum, mean and
// the extrema the dimensions are first put in memory order, so a transposed input needs no
// copy), size-1 dimensions are dropped and neighbouring dimensions that are both kept or both
// reduced are merged. What remains alternates kept and reduced segments, and the data splits
// into rows the length of the last segment:
//   - last segment reduced: each row folds into one accumulator (a tight contiguous loop);
//   - last segment kept: each row adds element-wise into a row of accumulators.
// Accumulators are laid out like the kept segments, so they come out in row-major result
// order and are written through the result's strides at the end.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <type_traits>
#include <vector>

#include "core/host_ops.h"
#include "core/scalar_type.h"
#include "core/strided_loop.h"
#include "native/stubs.h"

namespace op::native {

namespace {

// ----- the layout: segments of a contiguous input -----

struct ReductionLayout {
  TensorBase input;   // contiguous
  TensorBase result;  // result, its dimensions permuted like input's
  std::vector<int64_t> segment_sizes;
  std::vector<bool> segment_reduced;
  int64_t count = 0;  // input elements folded into each result element
};

// in_memory_order: the reduction does not care about the order it visits elements (sum,
// mean, max, min), so self's dimensions may be reordered to follow its strides.
ReductionLayout plan(const TensorBase& result, const TensorBase& self, bool in_memory_order) {
  const int64_t n = self.dim();
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  if (in_memory_order)
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int64_t a, int64_t b) { return self.stride(a) > self.stride(b); });
  ReductionLayout layout;
  layout.input = host::contiguous(host::permute(self, perm));
  layout.result = host::permute(result, perm);
  for (int64_t d = 0; d < n; ++d) {
    const int64_t size = layout.input.size(d);
    if (size == 1) continue;
    const bool reduced = layout.result.size(d) == 1;
    if (!layout.segment_sizes.empty() && layout.segment_reduced.back() == reduced) {
      layout.segment_sizes.back() *= size;
    } else {
      layout.segment_sizes.push_back(size);
      layout.segment_reduced.push_back(reduced);
    }
  }
  if (layout.segment_sizes.empty()) {  // a single element
    layout.segment_sizes.push_back(1);
    layout.segment_reduced.push_back(false);
  }
  layout.count = result.numel() == 0 ? 0 : self.numel() / result.numel();
  return layout;
}

// ----- the driver -----

// Op supplies: acc_t, out_t, identity(), fold(acc&, row, n, first_index) for a row of reduced
// elements whose flat reduced indices start at first_index, fold_rows(acc*, row, n, index)
// for a row of kept elements that all have reduced index `index`, and finish(acc, count).
template <class Op, class T>
void reduce(const TensorBase& result, const TensorBase& self, bool in_memory_order) {
  using acc_t = typename Op::acc_t;
  using out_t = typename Op::out_t;
  if (result.numel() == 0) return;
  const ReductionLayout layout = plan(result, self, in_memory_order);
  // Not a std::vector: vector<bool> has no addressable elements.
  const std::unique_ptr<acc_t[]> acc(new acc_t[static_cast<size_t>(result.numel())]);
  std::fill(acc.get(), acc.get() + result.numel(), Op::identity());

  const std::vector<int64_t>& sizes = layout.segment_sizes;
  const size_t m = sizes.size();
  const int64_t row_length = sizes[m - 1];
  const bool last_reduced = layout.segment_reduced[m - 1];
  // Strides of the outer segments in the accumulator array (kept segments) and in the flat
  // reduced index (reduced segments), for the odometer below.
  std::vector<int64_t> acc_stride(m, 0), index_stride(m, 0);
  int64_t acc_step = last_reduced ? 1 : row_length, index_step = last_reduced ? row_length : 1;
  for (size_t s = m - 1; s-- > 0;) {
    if (layout.segment_reduced[s]) {
      index_stride[s] = index_step;
      index_step *= sizes[s];
    } else {
      acc_stride[s] = acc_step;
      acc_step *= sizes[s];
    }
  }

  const int64_t total = layout.input.numel();
  if (total > 0) {
    const T* data = layout.input.template data_ptr<T>();
    std::vector<int64_t> position(m, 0);
    int64_t acc_base = 0, index_base = 0;
    for (int64_t row = 0; row < total / row_length; ++row) {
      const T* p = data + row * row_length;
      if (last_reduced)
        Op::fold(acc[acc_base], p, row_length, index_base);
      else
        Op::fold_rows(&acc[acc_base], p, row_length, index_base);
      for (size_t s = m - 1; s-- > 0;) {  // odometer over the outer segments
        if (++position[s] < sizes[s]) {
          acc_base += acc_stride[s];
          index_base += index_stride[s];
          break;
        }
        acc_base -= acc_stride[s] * (sizes[s] - 1);
        index_base -= index_stride[s] * (sizes[s] - 1);
        position[s] = 0;
      }
    }
  }

  out_t* dst = static_cast<out_t*>(layout.result.storage().data());
  size_t i = 0;
  for_each_offset(layout.result.sizes(), layout.result.strides(), layout.result.storage_offset(),
                  [&](int64_t offset) { dst[offset] = Op::finish(acc[i++], layout.count); });
}

// ----- element helpers -----

template <class T>
bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(x);
  else
    return false;
}

// Sum of a contiguous run of floats or doubles: vector partial sums within blocks (short
// enough to stay accurate in T), blocks added up in double. Explicit vectors because -O2 does
// not reassociate a plain float loop.
template <class T>
double sum_floating(const T* p, int64_t n) {
  typedef T Vec __attribute__((vector_size(16)));
  constexpr int64_t lanes = sizeof(Vec) / sizeof(T);
  constexpr int64_t step = 4 * lanes;
  constexpr int64_t block = 256 * step;
  double total = 0;
  int64_t i = 0;
  while (i + step <= n) {
    Vec v0 = {}, v1 = {}, v2 = {}, v3 = {};
    const int64_t end = std::min(n - n % step, i + block);
    for (; i < end; i += step) {
      Vec x0, x1, x2, x3;
      std::memcpy(&x0, p + i, sizeof(Vec));
      std::memcpy(&x1, p + i + lanes, sizeof(Vec));
      std::memcpy(&x2, p + i + 2 * lanes, sizeof(Vec));
      std::memcpy(&x3, p + i + 3 * lanes, sizeof(Vec));
      v0 += x0;
      v1 += x1;
      v2 += x2;
      v3 += x3;
    }
    const Vec v = (v0 + v1) + (v2 + v3);
    T partial = 0;
    for (int64_t l = 0; l < lanes; ++l) partial += v[l];
    total += partial;
  }
  for (; i < n; ++i) total += p[i];
  return total;
}

// acc[i] += p[i] for a row of floats or doubles into double accumulators, four at a time.
template <class T>
void add_row_floating(double* acc, const T* p, int64_t n) {
  typedef T In __attribute__((vector_size(4 * sizeof(T))));
  typedef double Wide __attribute__((vector_size(4 * sizeof(double))));
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    In x;
    Wide a;
    std::memcpy(&x, p + i, sizeof(In));
    std::memcpy(&a, acc + i, sizeof(Wide));
    a += __builtin_convertvector(x, Wide);
    std::memcpy(acc + i, &a, sizeof(Wide));
  }
  for (; i < n; ++i) acc[i] += p[i];
}

// x if it beats best (greater for Max, smaller otherwise), else best; works on scalars and
// vectors alike (a vector condition selects per lane).
template <bool Max, class V>
V pick(V x, V best) {
  if constexpr (Max)
    return x > best ? x : best;
  else
    return x < best ? x : best;
}

// The largest (Max) or smallest element of a non-empty contiguous run of floats or doubles,
// in vectors; has_nan reports whether the run holds a nan (the value returned then ignores it).
template <class T, bool Max>
T extremum_floating(const T* p, int64_t n, bool& has_nan) {
  typedef T Vec __attribute__((vector_size(16)));
  constexpr int64_t lanes = sizeof(Vec) / sizeof(T);
  T best = p[0];
  has_nan = false;
  int64_t i = 0;
  if (n >= 2 * lanes) {
    Vec b0, b1;
    std::memcpy(&b0, p, sizeof(Vec));
    std::memcpy(&b1, p + lanes, sizeof(Vec));
    auto nan = (b0 != b0) | (b1 != b1);
    for (i = 2 * lanes; i + 2 * lanes <= n; i += 2 * lanes) {
      Vec x0, x1;
      std::memcpy(&x0, p + i, sizeof(Vec));
      std::memcpy(&x1, p + i + lanes, sizeof(Vec));
      nan |= (x0 != x0) | (x1 != x1);
      b0 = pick<Max>(x0, b0);
      b1 = pick<Max>(x1, b1);
    }
    const Vec b = pick<Max>(b1, b0);
    best = b[0];
    for (int64_t l = 0; l < lanes; ++l) {
      best = pick<Max>(b[l], best);
      has_nan |= nan[l] != 0;
    }
  }
  for (; i < n; ++i) {
    has_nan |= is_nan(p[i]);
    best = pick<Max>(p[i], best);
  }
  return best;
}

// ----- the operations -----

template <class T>
struct SumOp {
  using acc_t = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  using out_t = T;
  static acc_t identity() { return 0; }
  static void fold(acc_t& acc, const T* p, int64_t n, int64_t) {
    if constexpr (std::is_floating_point_v<T>) {
      acc += sum_floating(p, n);
    } else {
      acc_t s = 0;
      for (int64_t i = 0; i < n; ++i) s += static_cast<acc_t>(p[i]);
      acc += s;
    }
  }
  static void fold_rows(acc_t* acc, const T* p, int64_t n, int64_t) {
    if constexpr (std::is_floating_point_v<T>)
      add_row_floating(acc, p, n);
    else
      for (int64_t i = 0; i < n; ++i) acc[i] += static_cast<acc_t>(p[i]);
  }
  static T finish(acc_t acc, int64_t) { return static_cast<T>(acc); }
};

template <class T>
struct MeanOp : SumOp<T> {
  using acc_t = typename SumOp<T>::acc_t;
  // count 0 (an empty reduction) gives 0/0 = nan for floating results.
  static T finish(acc_t acc, int64_t count) { return static_cast<T>(static_cast<double>(acc) / count); }
};

// Extrema propagate nan: once a nan is seen it stays.
template <class T, bool Max>
struct ExtremumOp {
  using acc_t = T;
  using out_t = T;
  static bool takes(T x, T acc) { return is_nan(x) || (Max ? x > acc : x < acc); }
  static acc_t identity() {
    using limits = std::numeric_limits<T>;
    if constexpr (limits::has_infinity)
      return Max ? -limits::infinity() : limits::infinity();
    else
      return Max ? limits::lowest() : limits::max();
  }
  static void fold(acc_t& acc, const T* p, int64_t n, int64_t) {
    if constexpr (std::is_floating_point_v<T>) {
      if (is_nan(acc)) return;
      bool has_nan = false;
      const T best = extremum_floating<T, Max>(p, n, has_nan);
      acc = has_nan ? std::numeric_limits<T>::quiet_NaN() : pick<Max>(best, acc);
    } else {
      T best = acc;
      for (int64_t i = 0; i < n; ++i) best = pick<Max>(p[i], best);
      acc = best;
    }
  }
  static void fold_rows(acc_t* acc, const T* p, int64_t n, int64_t) {
    for (int64_t i = 0; i < n; ++i)
      if (takes(p[i], acc[i])) acc[i] = p[i];
  }
  static T finish(acc_t acc, int64_t) { return acc; }
};

// The first maximum in row-major order; the first nan counts as the maximum.
template <class T>
struct ArgmaxOp {
  struct acc_t {
    T value;
    int64_t index;  // -1: nothing seen yet
  };
  using out_t = int64_t;
  static bool beats(T x, const acc_t& acc) {
    return acc.index < 0 || x > acc.value || (is_nan(x) && !is_nan(acc.value));
  }
  static acc_t identity() { return {T(), -1}; }
  static void fold(acc_t& acc, const T* p, int64_t n, int64_t first_index) {
    if constexpr (std::is_floating_point_v<T>) {
      // Block by block: the vector maximum says whether a block holds a new answer, and
      // only such a block is searched for the position.
      constexpr int64_t block = 1024;
      for (int64_t start = 0; start < n; start += block) {
        if (acc.index >= 0 && is_nan(acc.value)) return;  // an earlier nan: nothing beats it
        const int64_t length = std::min(block, n - start);
        bool has_nan = false;
        const T best = extremum_floating<T, true>(p + start, length, has_nan);
        if (!has_nan && acc.index >= 0 && !(best > acc.value)) continue;
        for (int64_t i = start; i < start + length; ++i)
          if (has_nan ? is_nan(p[i]) : p[i] == best) {
            acc = {p[i], first_index + i};
            break;
          }
      }
    } else {
      for (int64_t i = 0; i < n; ++i)
        if (beats(p[i], acc)) acc = {p[i], first_index + i};
    }
  }
  static void fold_rows(acc_t* acc, const T* p, int64_t n, int64_t index) {
    for (int64_t i = 0; i < n; ++i)
      if (beats(p[i], acc[i])) acc[i] = {p[i], index};
  }
  static int64_t finish(const acc_t& acc, int64_t) { return acc.index; }
};

// ----- the stub entries -----

void sum_kernel(const TensorBase& result, const TensorBase& self) {
  OP_DISPATCH_ALL_TYPES(self.dtype(), "sum", { reduce<SumOp<scalar_t>, scalar_t>(result, self, true); });
}

void mean_kernel(const TensorBase& result, const TensorBase& self) {
  OP_DISPATCH_ALL_TYPES(self.dtype(), "mean", { reduce<MeanOp<scalar_t>, scalar_t>(result, self, true); });
}

void amax_kernel(const TensorBase& result, const TensorBase& self) {
  OP_DISPATCH_ALL_TYPES(self.dtype(), "amax", { reduce<ExtremumOp<scalar_t, true>, scalar_t>(result, self, true); });
}

void amin_kernel(const TensorBase& result, const TensorBase& self) {
  OP_DISPATCH_ALL_TYPES(self.dtype(), "amin", { reduce<ExtremumOp<scalar_t, false>, scalar_t>(result, self, true); });
}

// Indices count in self's own row-major order, so the dimensions keep their order.
void argmax_kernel(const TensorBase& result, const TensorBase& self) {
  OP_DISPATCH_ALL_TYPES(self.dtype(), "argmax", { reduce<ArgmaxOp<scalar_t>, scalar_t>(result, self, false); });
}

}  // namespace

OP_REGISTER_STUB(sum_stub, CPU, &sum_kernel);
OP_REGISTER_STUB(mean_stub, CPU, &mean_kernel);
OP_REGISTER_STUB(amax_stub, CPU, &amax_kernel);
OP_REGISTER_STUB(amin_stub, CPU, &amin_kernel);
OP_REGISTER_STUB(argmax_stub, CPU, &argmax_kernel);

}  // namespace op::native
