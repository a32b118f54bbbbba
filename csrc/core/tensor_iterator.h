// The meta base of structured elementwise operators. meta() calls one build_* function, which
// broadcasts the inputs, picks the dtype to compute in (type promotion, 0-d tensors acting
// like numbers), finds their common device and announces the output through
// set_output_raw_strided. impl() then runs for_each_element over the broadcast inputs:
//
//   void structured_add_Tensor::meta(const Tensor& self, const Tensor& other, const Scalar& alpha) {
//     build_borrowing_binary_op(maybe_get_output(), self, other, "add");
//   }
//   void structured_add_out::impl(...) {
//     OP_DISPATCH_ALL_TYPES(common_dtype(), "add", {
//       for_each_element<scalar_t>([](scalar_t x, scalar_t y) -> scalar_t { return x + y; });
//     });
//   }
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/meta_base.h"
#include "core/scalar_type.h"
#include "core/strided_loop.h"
#include "core/tensor.h"

namespace op {

class TensorIteratorBase : public impl::MetaBase {
 public:
  // `out` is maybe_get_output(): undefined for functional calls, self for in-place calls, the
  // user's tensor for out= calls; the wrapper checks or resizes it in set_output. `op_name`
  // (optional) prefixes error messages.
  void build_borrowing_binary_op(const Tensor& out, const Tensor& a, const Tensor& b, const char* op_name = nullptr);
  // Computes in the promoted dtype; the output is bool (or, given an out tensor, its dtype).
  void build_borrowing_comparison_op(const Tensor& out, const Tensor& a, const Tensor& b,
                                     const char* op_name = nullptr);
  void build_borrowing_unary_op(const Tensor& out, const Tensor& a, const char* op_name = nullptr);
  // Integral and bool inputs compute in (and produce) float32, e.g. sqrt.
  void build_borrowing_unary_float_op(const Tensor& out, const Tensor& a, const char* op_name = nullptr);

  IntArrayRef shape() const { return shape_; }
  ScalarType common_dtype() const { return common_dtype_; }  // what impl() computes in
  Device device() const { return device_; }
  int64_t numel() const { return numel_of(shape_); }
  int64_t ninputs() const { return static_cast<int64_t>(inputs_.size()); }
  const Tensor& input(int64_t i = 0) const;
  const Tensor& output(int64_t i = 0) const;

  // Runs f on every element: f takes one T per input (each input converted to T and
  // broadcast to shape()) and its result is stored into output(0), converted to the output's
  // dtype. T is normally common_dtype()'s C++ type. Needs host-readable memory (cpu kernels);
  // an output that overlaps an input in another layout is computed through a buffer.
  template <class T, class F>
  void for_each_element(F&& f) const;

 private:
  enum class ResultDtype { Common, Bool, FloatForIntegral };
  void build(const Tensor& out, std::vector<Tensor> inputs, ResultDtype rule, const char* op_name);
  // Helpers of for_each_element, out of line.
  void check_loop(size_t arity, const char* what) const;
  Tensor loop_input(size_t i, ScalarType dtype) const;             // converted and broadcast
  Tensor loop_output(ScalarType dtype, ArrayRef<Tensor> inputs) const;  // output(0) or a buffer
  void finish_loop(const Tensor& written) const;                   // copies a buffer to output(0)
  template <class T, class R, class F, size_t... I>
  void run_loop(F& f, std::index_sequence<I...>) const;

  std::vector<int64_t> shape_;
  ScalarType common_dtype_ = ScalarType::Float32;
  Device device_;
  std::vector<Tensor> inputs_;
  Tensor output_;
  const char* op_name_ = nullptr;
};

// ----- template definitions -----

template <class T, class F>
void TensorIteratorBase::for_each_element(F&& f) const {
  if constexpr (std::is_invocable_v<F&, T>) {
    run_loop<T, std::invoke_result_t<F&, T>>(f, std::make_index_sequence<1>{});
  } else if constexpr (std::is_invocable_v<F&, T, T>) {
    run_loop<T, std::invoke_result_t<F&, T, T>>(f, std::make_index_sequence<2>{});
  } else {
    static_assert(std::is_invocable_v<F&, T, T, T>, "for_each_element: f must take one T per input (1 to 3)");
    run_loop<T, std::invoke_result_t<F&, T, T, T>>(f, std::make_index_sequence<3>{});
  }
}

template <class T, class R, class F, size_t... I>
void TensorIteratorBase::run_loop(F& f, std::index_sequence<I...>) const {
  constexpr size_t N = sizeof...(I);
  check_loop(N, "for_each_element");
  const std::array<Tensor, N> in = {loop_input(I, scalar_type_of<T>)...};
  const Tensor out = loop_output(scalar_type_of<R>, ArrayRef<Tensor>(in.data(), N));
  R* out_base = static_cast<R*>(out.storage().data());
  const std::array<const T*, N> bases = {static_cast<const T*>(in[I].storage().data())...};
  const std::array<IntArrayRef, N + 1> strides = {out.strides(), in[I].strides()...};
  const std::array<int64_t, N + 1> start = {out.storage_offset(), in[I].storage_offset()...};
  for_each_offsets<N + 1>(shape_, strides, start, [&](const std::array<int64_t, N + 1>& o) {
    out_base[o[0]] = static_cast<R>(f(bases[I][o[I + 1]]...));
  });
  finish_loop(out);
}

}  // namespace op
