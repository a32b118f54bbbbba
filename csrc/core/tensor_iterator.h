// The meta base of structured elementwise operators. meta() calls one build_* function, which
// broadcasts the inputs, picks the dtype to compute in (type promotion, 0-d tensors acting
// like numbers), finds their common device and announces the output through
// set_output_raw_strided. impl() then calls a device's loop (a dispatch stub), which on the
// host runs for_each_element over the broadcast inputs:
//
//   void meta::structured_add_Tensor::meta(const TensorBase& self, const TensorBase& other, const Scalar& alpha) {
//     build_borrowing_binary_op(maybe_get_output(), self, other, "add");
//   }
//   void add_kernel(TensorIteratorBase& it, const Scalar& alpha) {   // csrc/native/cpu/
//     OP_DISPATCH_ALL_TYPES(it.common_dtype(), "add", {
//       it.for_each_element<scalar_t>([](scalar_t x, scalar_t y) { return x + y; });
//     });
//   }
//
// What a device loop may rely on after meta():
//   shape()          the broadcast shape; output(0) has exactly this shape
//   common_dtype()   the dtype to compute in; every input is read as this type (where: the
//                    condition input(0) is bool and is read as bool)
//   input(i)         the inputs in schema order, NOT broadcast or converted; an input may be a
//                    0-d cpu tensor while device() is another device (a number wrapped by a
//                    Scalar overload): read its one value on the host
//   output(0)        the result tensor, on device(); its dtype may differ from common_dtype()
//                    (comparisons: bool; out= and in-place: the out/self dtype), convert on store
//   ninputs(), device(), numel()
//   output_dtype()   output(0).dtype()
#pragma once

#include <array>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/meta_base.h"
#include "core/scalar.h"
#include "core/scalar_type.h"
#include "core/strided_loop.h"
#include "core/tensor.h"

namespace op {

class TensorIteratorBase : public impl::MetaBase {
 public:
  // `out` is maybe_get_output(): undefined for functional calls, self for in-place calls, the
  // user's tensor for out= calls. When defined, the result must cast into its dtype without
  // leaving its category (a float result into an int tensor is an error) and it keeps its
  // dtype; the wrapper checks or resizes it in set_output. `op_name` (optional) prefixes
  // error messages.
  void build_borrowing_binary_op(const TensorBase& out, const TensorBase& a, const TensorBase& b, const char* op_name = nullptr);
  // Integral and bool inputs compute in (and produce) float32, e.g. true division.
  void build_borrowing_binary_float_op(const TensorBase& out, const TensorBase& a, const TensorBase& b,
                                       const char* op_name = nullptr);
  // Computes in the promoted dtype; the output is bool (or, given an out tensor, its dtype).
  void build_borrowing_comparison_op(const TensorBase& out, const TensorBase& a, const TensorBase& b,
                                     const char* op_name = nullptr);
  void build_borrowing_unary_op(const TensorBase& out, const TensorBase& a, const char* op_name = nullptr);
  // Integral and bool inputs compute in (and produce) float32, e.g. sqrt.
  void build_borrowing_unary_float_op(const TensorBase& out, const TensorBase& a, const char* op_name = nullptr);
  // A unary op whose extra Scalar arguments take part in type promotion as Python numbers
  // (clamp: int32 tensor with min=0.5 computes in float32).
  void build_borrowing_unary_op_with_numbers(const TensorBase& out, const TensorBase& a, ArrayRef<Scalar> numbers,
                                             const char* op_name = nullptr);
  // where: the three inputs broadcast together; a and b promote, the condition does not (it
  // is read as bool).
  void build_borrowing_select_op(const TensorBase& out, const TensorBase& condition, const TensorBase& a, const TensorBase& b,
                                 const char* op_name = nullptr);

  IntArrayRef shape() const { return shape_; }
  ScalarType common_dtype() const { return common_dtype_; }  // what impl() computes in
  ScalarType output_dtype() const { return output(0).dtype(); }
  Device device() const { return device_; }
  int64_t numel() const { return numel_of(shape_); }
  int64_t ninputs() const { return static_cast<int64_t>(inputs_.size()); }
  const TensorBase& input(int64_t i = 0) const;
  const TensorBase& output(int64_t i = 0) const;
  const char* op_name() const { return op_name_ ? op_name_ : "elementwise operation"; }

  // Host loops (cpu kernels; need host-readable memory). f takes one T per input (each input
  // converted to T and broadcast to shape()); its result is stored into output(0), converted
  // to the output's dtype. T is normally common_dtype()'s C++ type. An output that overlaps an
  // input in another layout is computed through a buffer. Rows where every operand is
  // contiguous (or a broadcast single value) run as plain pointer loops the compiler can
  // vectorize; f is inlined, never called through a pointer.
  template <class T, class F>
  void for_each_element(F&& f) const;
  // The same with input i read as the i-th type of In (where: <bool, T, T>).
  template <class... In, class F>
  void for_each_element_as(F&& f) const;
  // With a hand-vectorized row function row(R* out, const T* in..., int64_t n), called for
  // each run of n elements where the output and every input are contiguous; f handles the
  // rest. row must compute exactly what f does.
  template <class T, class F, class Row>
  void for_each_element(F&& f, Row&& row) const;

 private:
  enum class ResultDtype { Common, Bool, FloatForIntegral };
  void build(const TensorBase& out, std::vector<TensorBase> inputs, size_t first_promoted, ArrayRef<Scalar> numbers,
             ResultDtype rule, const char* op_name);
  void announce_output(const TensorBase& out, ScalarType result_dtype);

  // ----- the host loop -----
  // Operands of one run: output (index 0) and inputs, their base addresses and element
  // strides over a shape with size-1 dimensions dropped, dimensions ordered by the output's
  // strides and mergeable neighbours merged (a contiguous operand set becomes one dimension).
  struct LoopPlan {
    std::vector<int64_t> sizes;    // innermost last; empty: a single element
    std::vector<int64_t> strides;  // strides[d * noperands + k]: operand k's stride in dimension d
    std::vector<void*> data;       // element 0 of each operand
    size_t noperands = 0;
    int64_t stride(size_t d, size_t k) const { return strides[d * noperands + k]; }
  };
  struct NoRow {};
  void check_loop(size_t arity, const char* what) const;
  TensorBase loop_input(size_t i, ScalarType dtype) const;                   // converted (a copy only when needed)
  TensorBase loop_output(ScalarType dtype, ArrayRef<TensorBase> inputs) const;   // output(0) or a buffer
  LoopPlan plan_loop(const TensorBase& out, ArrayRef<TensorBase> inputs) const;  // inputs already converted
  void finish_loop(const TensorBase& written) const;                         // copies a buffer to output(0)
  template <class R, class... In, class F, class Row, size_t... I>
  void run_loop(F& f, Row& row, std::index_sequence<I...>) const;

  std::vector<int64_t> shape_;
  ScalarType common_dtype_ = ScalarType::Float32;
  Device device_;
  std::vector<TensorBase> inputs_;
  TensorBase output_;
  const char* op_name_ = nullptr;
};

// ----- template definitions -----

namespace loop_detail {

// How a row reads one input: every element (contiguous) or one value (a broadcast stride 0,
// read once per row).
template <class T>
struct ContiguousRow {
  const T* p;
  T operator[](int64_t i) const { return p[i]; }
};
template <class T>
struct ScalarRow {
  T v;
  T operator[](int64_t) const { return v; }
};

// The vectorizable case: the output is contiguous and every input contiguous or a single value.
template <class R, class F, class... Inputs>
void contiguous_row(F& f, R* out, int64_t n, Inputs... in) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<R>(f(in[i]...));
}

// Picks, input by input, ContiguousRow or ScalarRow (bit k of scalar_mask) and then runs the
// row with the concrete types, so every combination is its own loop.
template <class R, class InTuple, size_t K = 0, class F, class... Made>
void dispatch_row(F& f, R* out, int64_t n, void* const* in, unsigned scalar_mask, Made... made) {
  if constexpr (K == std::tuple_size_v<InTuple>) {
    contiguous_row<R>(f, out, n, made...);
  } else {
    using T = std::tuple_element_t<K, InTuple>;
    const T* p = static_cast<const T*>(in[K]);
    if (scalar_mask & (1u << K))
      dispatch_row<R, InTuple, K + 1>(f, out, n, in, scalar_mask, made..., ScalarRow<T>{*p});
    else
      dispatch_row<R, InTuple, K + 1>(f, out, n, in, scalar_mask, made..., ContiguousRow<T>{p});
  }
}

template <class R, class... In, class F, size_t... I>
void strided_row(F& f, R* out, int64_t out_stride, int64_t n, void* const* in, const int64_t* in_strides,
                 std::index_sequence<I...>) {
  const std::tuple<const In*...> p{static_cast<const In*>(in[I])...};
  for (int64_t i = 0; i < n; ++i) out[i * out_stride] = static_cast<R>(f(std::get<I>(p)[i * in_strides[I]]...));
}

}  // namespace loop_detail

template <class T, class F>
void TensorIteratorBase::for_each_element(F&& f) const {
  for_each_element<T>(f, NoRow{});
}

template <class... In, class F>
void TensorIteratorBase::for_each_element_as(F&& f) const {
  NoRow none;
  run_loop<std::invoke_result_t<F&, In...>, In...>(f, none, std::index_sequence_for<In...>{});
}

template <class T, class F, class Row>
void TensorIteratorBase::for_each_element(F&& f, Row&& row) const {
  if constexpr (std::is_invocable_v<F&, T>) {
    run_loop<std::invoke_result_t<F&, T>, T>(f, row, std::make_index_sequence<1>{});
  } else if constexpr (std::is_invocable_v<F&, T, T>) {
    run_loop<std::invoke_result_t<F&, T, T>, T, T>(f, row, std::make_index_sequence<2>{});
  } else {
    static_assert(std::is_invocable_v<F&, T, T, T>, "for_each_element: f must take one T per input (1 to 3)");
    run_loop<std::invoke_result_t<F&, T, T, T>, T, T, T>(f, row, std::make_index_sequence<3>{});
  }
}

template <class R, class... In, class F, class Row, size_t... I>
void TensorIteratorBase::run_loop(F& f, Row& row, std::index_sequence<I...>) const {
  constexpr size_t N = sizeof...(In);
  static_assert(N == sizeof...(I) && N <= 8, "run_loop: one type per input");
  check_loop(N, "for_each_element");
  if (numel() == 0) return;
  const std::array<TensorBase, N> in = {loop_input(I, scalar_type_of<In>)...};
  const TensorBase out = loop_output(scalar_type_of<R>, ArrayRef<TensorBase>(in.data(), N));
  const LoopPlan plan = plan_loop(out, ArrayRef<TensorBase>(in.data(), N));

  R* const out_base = static_cast<R*>(plan.data[0]);
  const size_t nd = plan.sizes.size();
  if (nd == 0) {  // one element
    *out_base = static_cast<R>(f(*static_cast<const In*>(plan.data[I + 1])...));
    finish_loop(out);
    return;
  }

  // The innermost dimension decides the row kind once; the outer dimensions only move the
  // row's start (an odometer over element offsets).
  const int64_t n = plan.sizes[nd - 1];
  const int64_t out_stride = plan.stride(nd - 1, 0);
  const std::array<int64_t, N> in_strides = {plan.stride(nd - 1, I + 1)...};
  unsigned scalar_mask = 0;
  bool unit_rows = out_stride == 1;
  for (size_t k = 0; k < N; ++k) {
    if (in_strides[k] == 0) scalar_mask |= 1u << k;
    else if (in_strides[k] != 1) unit_rows = false;
  }
  constexpr bool kHasRow = !std::is_same_v<std::decay_t<Row>, NoRow>;

  std::array<int64_t, N + 1> offset{};
  std::vector<int64_t> index(nd - 1, 0);
  const int64_t rows = numel() / n;
  std::array<void*, N> row_in;
  for (int64_t r = 0; r < rows; ++r) {
    R* row_out = out_base + offset[0];
    ((row_in[I] = static_cast<In*>(plan.data[I + 1]) + offset[I + 1]), ...);
    if (unit_rows) {
      if constexpr (kHasRow) {
        if (scalar_mask == 0)
          row(row_out, static_cast<const In*>(row_in[I])..., n);
        else
          loop_detail::dispatch_row<R, std::tuple<In...>>(f, row_out, n, row_in.data(), scalar_mask);
      } else {
        loop_detail::dispatch_row<R, std::tuple<In...>>(f, row_out, n, row_in.data(), scalar_mask);
      }
    } else {
      loop_detail::strided_row<R, In...>(f, row_out, out_stride, n, row_in.data(), in_strides.data(),
                                         std::index_sequence<I...>{});
    }
    for (size_t d = nd - 1; d-- > 0;) {  // next row
      if (++index[d] < plan.sizes[d]) {
        for (size_t k = 0; k <= N; ++k) offset[k] += plan.stride(d, k);
        break;
      }
      for (size_t k = 0; k <= N; ++k) offset[k] -= plan.stride(d, k) * (plan.sizes[d] - 1);
      index[d] = 0;
    }
  }
  finish_loop(out);
}

}  // namespace op
