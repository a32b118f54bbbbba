// The C++ side of a kernel's signature: which schema types its parameters stand for, so a
// registration can be checked against the operator's schema once instead of trusting it on
// every call. `TensorBase(const TensorBase&, int64_t)` has argument kinds {TensorBase, int} and returns {TensorBase}.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "core/array_ref.h"
#include "core/device.h"
#include "core/dimname.h"
#include "core/dispatch_key_set.h"
#include "core/layout.h"
#include "core/qscheme.h"
#include "core/scalar.h"
#include "core/storage.h"
#include "core/stream.h"
#include "core/tensor.h"

namespace op {

template <class... T>
struct TypeList {};

// Return type and parameters of functions, function pointers and (non-generic) lambdas.
template <class F>
struct FunctionTraits : FunctionTraits<decltype(&F::operator())> {};
template <class R, class... A>
struct FunctionTraits<R(A...)> {
  using Ret = R;
  using Args = TypeList<A...>;
};
template <class R, class... A>
struct FunctionTraits<R (*)(A...)> : FunctionTraits<R(A...)> {};
template <class C, class R, class... A>
struct FunctionTraits<R (C::*)(A...) const> : FunctionTraits<R(A...)> {};
template <class C, class R, class... A>
struct FunctionTraits<R (C::*)(A...)> : FunctionTraits<R(A...)> {};

// Kernels may take the call's DispatchKeySet as their first parameter (to redispatch);
// it is not part of the operator's signature.
template <class Args>
struct DropKeySet {
  using type = Args;
  static constexpr bool takes_key_set = false;
};
template <class... A>
struct DropKeySet<TypeList<DispatchKeySet, A...>> {
  using type = TypeList<A...>;
  static constexpr bool takes_key_set = true;
};

// ----- kinds: the schema type a C++ parameter type represents -----

template <class T, class = void>
struct CppKind;  // undefined for unsupported types: a compile error names the type

// Each kind is a string literal, so a signature's kinds cost no code per signature: every
// group's unit makes several (compile time of the generated units, docs/benchmarks.md).
#define OP_CPP_KIND(TYPE, NAME)                             \
  template <>                                               \
  struct CppKind<TYPE> {                                    \
    static constexpr const char* name = NAME;               \
  };                                                        \
  template <>                                               \
  struct CppKind<std::optional<TYPE>> {                     \
    static constexpr const char* name = NAME "?";           \
  };
OP_CPP_KIND(TensorBase, "Tensor")
OP_CPP_KIND(ArrayRef<TensorBase>, "Tensor[]")
OP_CPP_KIND(std::vector<TensorBase>, "Tensor[]")
OP_CPP_KIND(ArrayRef<std::optional<TensorBase>>, "Tensor?[]")
OP_CPP_KIND(std::vector<std::optional<TensorBase>>, "Tensor?[]")
OP_CPP_KIND(int64_t, "int")
OP_CPP_KIND(double, "float")
OP_CPP_KIND(bool, "bool")
OP_CPP_KIND(std::string, "str")
OP_CPP_KIND(std::string_view, "str")
OP_CPP_KIND(Scalar, "Scalar")
OP_CPP_KIND(ScalarType, "ScalarType")
OP_CPP_KIND(Device, "Device")
OP_CPP_KIND(Generator, "Generator")
OP_CPP_KIND(Layout, "Layout")
OP_CPP_KIND(MemoryFormat, "MemoryFormat")
OP_CPP_KIND(IntArrayRef, "int[]")
OP_CPP_KIND(std::vector<int64_t>, "int[]")
OP_CPP_KIND(ArrayRef<double>, "float[]")
OP_CPP_KIND(std::vector<double>, "float[]")
OP_CPP_KIND(std::vector<bool>, "bool[]")
OP_CPP_KIND(int8_t, "int")  // DeviceIndex
OP_CPP_KIND(QScheme, "QScheme")
OP_CPP_KIND(ArrayRef<Scalar>, "Scalar[]")
OP_CPP_KIND(std::vector<Scalar>, "Scalar[]")
OP_CPP_KIND(Storage, "Storage")
OP_CPP_KIND(Stream, "Stream")
OP_CPP_KIND(Dimname, "Dimname")
OP_CPP_KIND(ArrayRef<Dimname>, "Dimname[]")
OP_CPP_KIND(std::vector<Dimname>, "Dimname[]")
#undef OP_CPP_KIND

template <class T>
constexpr const char* cpp_kind() {
  return CppKind<std::decay_t<T>>::name;
}

template <class R>
struct ReturnKinds {
  static constexpr const char* kinds[] = {cpp_kind<R>()};
  static constexpr size_t size = 1;
};
template <>
struct ReturnKinds<void> {
  static constexpr const char* const* kinds = nullptr;
  static constexpr size_t size = 0;
};
template <class... T>
struct ReturnKinds<std::tuple<T...>> {
  static constexpr const char* kinds[] = {cpp_kind<T>()..., nullptr};  // nullptr: a zero-length array is ill-formed
  static constexpr size_t size = sizeof...(T);
};

// One per distinct operator signature Sig = Ret(Args...), built on first use. Constructed and
// destroyed out of line (kernel_function.cpp): a signature's template only lists its kinds.
struct CppSignature {
  const std::type_info* type;  // typeid(Sig): identity, so a typed call can trust the pointer cast
  std::vector<std::string> arg_kinds;
  std::vector<std::string> return_kinds;

  CppSignature(const std::type_info* type, const char* const* args, size_t arg_count, const char* const* returns,
               size_t return_count);
  CppSignature(const CppSignature&) = delete;
  CppSignature& operator=(const CppSignature&) = delete;
  ~CppSignature();

  std::string kinds_str() const;  // "(Tensor, int) -> Tensor"
  std::string type_name() const;  // demangled C++ function type
  // The kinds "(Tensor, int) -> Tensor" of lists of schema kinds (a schema's, to compare).
  static std::string kinds_str(const std::vector<std::string>& args, const std::vector<std::string>& returns);
};

template <class Sig>
struct CppSignatureOf;
template <class R, class... A>
struct CppSignatureOf<R(A...)> {
  static const CppSignature& get() {
    static constexpr const char* args[] = {cpp_kind<A>()..., nullptr};
    using Returns = ReturnKinds<std::decay_t<R>>;
    static const CppSignature sig(&typeid(R(A...)), args, sizeof...(A), Returns::kinds, Returns::size);
    return sig;
  }
};
template <class Sig>
const CppSignature& cpp_signature_of() {
  return CppSignatureOf<Sig>::get();
}

}  // namespace op
