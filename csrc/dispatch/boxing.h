// Converting between typed C++ calls and IValue stacks, in both directions:
//  * run_unboxed_on_stack: a typed kernel called boxed (by a boxed fallback's redispatch,
//    by Python) pops its arguments off the stack and pushes its results (Unbox, box);
//  * box + PopResults: a boxed kernel (a fallback, a Python function) reached from a typed
//    call gets the arguments pushed and its results popped (see KernelFunction::call).
// Each conversion checks the IValue's type and throws op::Error naming the argument.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/dimname.h"
#include "core/ivalue.h"
#include "core/layout.h"
#include "core/qscheme.h"
#include "core/storage.h"
#include "core/stream.h"
#include "dispatch/cpp_signature.h"

namespace op {

struct OperatorKernel;

namespace boxing {

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

[[noreturn]] void argument_error(size_t index, const char* expected, const IValue& got);
[[noreturn]] void result_count_error(size_t expected, size_t got);

inline void expect(bool ok, size_t index, const char* expected, const IValue& v) {
  if (!ok) argument_error(index, expected, v);
}
// ----- IValue -> C++ parameter -----
// get() returns something the parameter type binds to; references point into the stack,
// which outlives the call.

template <class T, class = void>
struct Unbox;

template <>
struct Unbox<TensorBase> {
  static const TensorBase& get(IValue& v, size_t i) {
    expect(v.is_tensor(), i, "Tensor", v);
    return v.to_tensor();
  }
};
template <>
struct Unbox<TensorBase&> {  // mutable (out=, in-place) arguments
  static TensorBase& get(IValue& v, size_t i) {
    expect(v.is_tensor(), i, "Tensor", v);
    return v.to_tensor_mut();
  }
};
template <>
struct Unbox<std::optional<TensorBase>> {
  static std::optional<TensorBase> get(IValue& v, size_t i) {
    expect(v.is_none() || v.is_tensor(), i, "Tensor?", v);
    return v.to_optional_tensor();
  }
};
template <>
struct Unbox<ArrayRef<TensorBase>> {
  static ArrayRef<TensorBase> get(IValue& v, size_t i) {
    expect(v.is_tensor_list(), i, "Tensor[]", v);
    return v.to_tensor_list();
  }
};
template <>
struct Unbox<std::vector<TensorBase>> {
  static const std::vector<TensorBase>& get(IValue& v, size_t i) {
    expect(v.is_tensor_list(), i, "Tensor[]", v);
    return v.to_tensor_list();
  }
};
template <>
struct Unbox<ArrayRef<std::optional<TensorBase>>> {
  static ArrayRef<std::optional<TensorBase>> get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::OptionalTensorList, i, "Tensor?[]", v);
    return v.to_optional_tensor_list();
  }
};
template <>
struct Unbox<std::vector<std::optional<TensorBase>>> {
  static const std::vector<std::optional<TensorBase>>& get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::OptionalTensorList, i, "Tensor?[]", v);
    return v.to_optional_tensor_list();
  }
};
template <>
struct Unbox<int64_t> {
  static int64_t get(IValue& v, size_t i) {
    expect(v.is_int(), i, "int", v);
    return v.to_int();
  }
};
template <>
struct Unbox<double> {
  static double get(IValue& v, size_t i) {
    expect(v.is_double() || v.is_int(), i, "float", v);
    return v.to_double();
  }
};
template <>
struct Unbox<bool> {
  static bool get(IValue& v, size_t i) {
    expect(v.is_bool(), i, "bool", v);
    return v.to_bool();
  }
};
template <>
struct Unbox<std::string> {
  static const std::string& get(IValue& v, size_t i) {
    expect(v.is_string(), i, "str", v);
    return v.to_str();
  }
};
template <>
struct Unbox<std::string_view> {
  static std::string_view get(IValue& v, size_t i) { return Unbox<std::string>::get(v, i); }
};
template <>
struct Unbox<Scalar> {
  static Scalar get(IValue& v, size_t i) {
    expect(v.is_scalar_like(), i, "Scalar", v);
    return v.to_scalar();
  }
};
template <>
struct Unbox<ScalarType> {
  static ScalarType get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::ScalarType, i, "ScalarType", v);
    return v.to_scalar_type();
  }
};
template <>
struct Unbox<Device> {
  static Device get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::Device, i, "Device", v);
    return v.to_device();
  }
};
template <>
struct Unbox<Generator> {
  static Generator get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::Generator, i, "Generator", v);
    return v.to_generator();
  }
};
// Enums and DeviceIndex are boxed as int, like PyTorch.
template <>
struct Unbox<Layout> {
  static Layout get(IValue& v, size_t i) { return static_cast<Layout>(Unbox<int64_t>::get(v, i)); }
};
template <>
struct Unbox<MemoryFormat> {
  static MemoryFormat get(IValue& v, size_t i) { return static_cast<MemoryFormat>(Unbox<int64_t>::get(v, i)); }
};
template <>
struct Unbox<QScheme> {
  static QScheme get(IValue& v, size_t i) { return static_cast<QScheme>(Unbox<int64_t>::get(v, i)); }
};
template <>
struct Unbox<int8_t> {  // DeviceIndex
  static int8_t get(IValue& v, size_t i) {
    const int64_t value = Unbox<int64_t>::get(v, i);
    expect(value >= INT8_MIN && value <= INT8_MAX, i, "DeviceIndex (an int in [-128, 127])", v);
    return static_cast<int8_t>(value);
  }
};
template <>
struct Unbox<Storage> {
  static const Storage& get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::Storage, i, "Storage", v);
    return v.to_storage();
  }
};
template <>
struct Unbox<Stream> {
  static Stream get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::Stream, i, "Stream", v);
    return v.to_stream();
  }
};
template <>
struct Unbox<Dimname> {
  static Dimname get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::Dimname, i, "Dimname", v);
    return v.to_dimname();
  }
};
template <>
struct Unbox<ArrayRef<Dimname>> {
  static ArrayRef<Dimname> get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::DimnameList, i, "Dimname[]", v);
    return v.to_dimname_list();
  }
};
template <>
struct Unbox<std::vector<Dimname>> {
  static const std::vector<Dimname>& get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::DimnameList, i, "Dimname[]", v);
    return v.to_dimname_list();
  }
};
// Scalar[]: an int, float or bool list is taken too, converted in place (the stack holds the
// converted list for the call).
template <>
struct Unbox<std::vector<Scalar>> {
  static const std::vector<Scalar>& get(IValue& v, size_t i) {
    const IValue::Tag tag = v.tag();
    const bool numbers = tag == IValue::Tag::IntList || tag == IValue::Tag::DoubleList || tag == IValue::Tag::BoolList;
    expect(tag == IValue::Tag::ScalarList || numbers, i, "Scalar[]", v);
    if (numbers) v = IValue(v.as_scalar_list());
    return v.to_scalar_list();
  }
};
template <>
struct Unbox<ArrayRef<Scalar>> {
  static ArrayRef<Scalar> get(IValue& v, size_t i) { return Unbox<std::vector<Scalar>>::get(v, i); }
};
template <>
struct Unbox<IntArrayRef> {
  static IntArrayRef get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::IntList, i, "int[]", v);
    return v.to_int_list();
  }
};
template <>
struct Unbox<std::vector<int64_t>> {
  static const std::vector<int64_t>& get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::IntList, i, "int[]", v);
    return v.to_int_list();
  }
};
template <>
struct Unbox<ArrayRef<double>> {
  static ArrayRef<double> get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::DoubleList, i, "float[]", v);
    return v.to_double_list();
  }
};
template <>
struct Unbox<std::vector<double>> {
  static const std::vector<double>& get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::DoubleList, i, "float[]", v);
    return v.to_double_list();
  }
};
template <>
struct Unbox<std::vector<bool>> {
  static const std::vector<bool>& get(IValue& v, size_t i) {
    expect(v.tag() == IValue::Tag::BoolList, i, "bool[]", v);
    return v.to_bool_list();
  }
};
template <class T>
struct Unbox<std::optional<T>, std::enable_if_t<!std::is_same_v<T, TensorBase>>> {
  static std::optional<std::decay_t<decltype(Unbox<T>::get(std::declval<IValue&>(), 0))>> get(IValue& v, size_t i) {
    if (v.is_none()) return std::nullopt;
    return Unbox<T>::get(v, i);
  }
};

// The Unbox for a parameter type: `const TensorBase&` and `TensorBase` read, `TensorBase&` writes.
template <class A>
using UnboxFor = std::conditional_t<std::is_same_v<A, TensorBase&>, Unbox<TensorBase&>, Unbox<std::decay_t<A>>>;

// ----- C++ value -> IValue -----

template <class T>
IValue box(const T& value) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, ArrayRef<TensorBase>> || std::is_same_v<D, ArrayRef<std::optional<TensorBase>>> ||
                std::is_same_v<D, IntArrayRef> || std::is_same_v<D, ArrayRef<double>> ||
                std::is_same_v<D, ArrayRef<Scalar>> || std::is_same_v<D, ArrayRef<Dimname>>) {
    return IValue(value.vec());
  } else if constexpr (std::is_same_v<D, std::string_view>) {
    return IValue(std::string(value));
  } else if constexpr (std::is_same_v<D, Layout> || std::is_same_v<D, MemoryFormat> || std::is_same_v<D, QScheme>) {
    return IValue(static_cast<int64_t>(value));
  } else if constexpr (std::is_same_v<D, std::optional<TensorBase>>) {
    return IValue(value);
  } else if constexpr (IsOptional<D>::value) {
    return value ? box(*value) : IValue();
  } else {
    return IValue(value);
  }
}

template <class R>
struct IsTuple : std::false_type {};
template <class... T>
struct IsTuple<std::tuple<T...>> : std::true_type {};

template <class R>
void push_results(Stack& stack, R&& result) {
  if constexpr (IsTuple<std::decay_t<R>>::value)
    std::apply([&](auto&&... items) { (stack.push_back(box(items)), ...); }, result);
  else
    stack.push_back(box(result));
}

// ----- a typed kernel run on a stack -----

template <class R, class... A, size_t... I>
void run_unboxed_on_stack_impl(R (*fn)(OperatorKernel*, DispatchKeySet, A...), OperatorKernel* functor,
                               DispatchKeySet ks, Stack* stack, std::index_sequence<I...>) {
  constexpr size_t n = sizeof...(A);
  if (stack->size() < n) result_count_error(n, stack->size());
  IValue* args = stack->data() + (stack->size() - n);
  if constexpr (std::is_void_v<R>) {
    fn(functor, ks, UnboxFor<A>::get(args[I], I)...);
    stack->erase(stack->end() - n, stack->end());
  } else {
    Stack results;  // boxed while the arguments (which a TensorBase& result may alias) are alive
    push_results(results, fn(functor, ks, UnboxFor<A>::get(args[I], I)...));
    stack->erase(stack->end() - n, stack->end());
    for (IValue& r : results) stack->push_back(std::move(r));
  }
}

template <class R, class... A>
void run_unboxed_on_stack(R (*fn)(OperatorKernel*, DispatchKeySet, A...), OperatorKernel* functor, DispatchKeySet ks,
                          Stack* stack) {
  run_unboxed_on_stack_impl(fn, functor, ks, stack, std::index_sequence_for<A...>{});
}

// ----- results of a boxed kernel for a typed caller -----

template <class T>
T pop_value(IValue& v, size_t i) {
  if constexpr (std::is_same_v<T, TensorBase>) {
    expect(v.is_tensor(), i, "Tensor", v);
    return std::move(v.to_tensor_mut());
  } else {
    return T(Unbox<T>::get(v, i));
  }
}

// Index of the argument a `TensorBase&` result refers to: self for in-place ops (first
// parameter), otherwise the out= arguments, which come last.
template <class... A>
constexpr size_t mutable_tensor_arg(size_t nth_from_end) {
  constexpr bool is_ref[] = {std::is_same_v<A, TensorBase&>..., false};
  constexpr size_t n = sizeof...(A);
  if (n > 0 && is_ref[0] && nth_from_end == 0) return 0;
  for (size_t i = n; i-- > 0;) {
    if (!is_ref[i]) continue;
    if (nth_from_end == 0) return i;
    --nth_from_end;
  }
  return n;  // none: rejected by a static_assert at the use
}

template <class R, class... A>
struct PopResults {
  static R get(Stack& stack, std::tuple<A&...>&) {
    if (stack.size() != 1) result_count_error(1, stack.size());
    return pop_value<R>(stack[0], 0);
  }
};
template <class... A>
struct PopResults<void, A...> {
  static void get(Stack& stack, std::tuple<A&...>&) {
    if (!stack.empty()) result_count_error(0, stack.size());
  }
};
template <class... A>
struct PopResults<TensorBase&, A...> {
  static TensorBase& get(Stack& stack, std::tuple<A&...>& args) {
    constexpr size_t index = mutable_tensor_arg<A...>(0);
    static_assert(index < sizeof...(A), "a kernel returning Tensor& needs a Tensor& parameter");
    if (stack.size() != 1) result_count_error(1, stack.size());
    return std::get<index>(args);
  }
};
// Operators whose written self the C++ signature passes as `const TensorBase&` (PyTorch's
// inplace_view operators: resize_, as_strided_, ...) and their out= variants return one of
// their tensor arguments: the one the boxed kernel returned (the first, when several are it).
template <class... A>
struct PopResults<const TensorBase&, A...> {
  static const TensorBase& get(Stack& stack, std::tuple<A&...>& args) {
    if (stack.size() != 1) result_count_error(1, stack.size());
    expect(stack[0].is_tensor(), 0, "Tensor", stack[0]);
    const TensorBase& result = stack[0].to_tensor();
    const TensorBase* found = nullptr;
    std::apply([&](auto&... arg) { (match(arg, result, found), ...); }, args);
    expect(found != nullptr, 0, "one of the operator's Tensor arguments", stack[0]);
    return *found;
  }
  template <class T>
  static void match(const T& arg, const TensorBase& result, const TensorBase*& found) {
    if constexpr (std::is_same_v<T, TensorBase>)
      if (found == nullptr && arg.unsafe_impl() == result.unsafe_impl()) found = &arg;
  }
};
template <class... T, class... A>
struct PopResults<std::tuple<T...>, A...> {
  static std::tuple<T...> get(Stack& stack, std::tuple<A&...>& args) {
    if (stack.size() != sizeof...(T)) result_count_error(sizeof...(T), stack.size());
    return build(stack, args, std::index_sequence_for<T...>{});
  }
  template <size_t... I>
  static std::tuple<T...> build(Stack& stack, std::tuple<A&...>& args, std::index_sequence<I...>) {
    return std::tuple<T...>(element<T, I>(stack, args)...);
  }
  template <class E, size_t I>
  static decltype(auto) element(Stack& stack, std::tuple<A&...>& args) {
    if constexpr (std::is_same_v<E, TensorBase&>) {
      constexpr size_t index = mutable_tensor_arg<A...>(sizeof...(T) - 1 - I);
      static_assert(index < sizeof...(A), "a kernel returning Tensor& needs Tensor& parameters");
      return static_cast<TensorBase&>(std::get<index>(args));
    } else {
      return pop_value<E>(stack[I], I);
    }
  }
};

}  // namespace boxing
}  // namespace op
