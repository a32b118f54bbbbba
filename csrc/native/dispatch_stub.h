// Device kernels behind one operator implementation. A structured operator's impl() is written
// once, device-generic, in csrc/native/*.cpp and calls a stub; the loops live per device in
// csrc/native/cpu/*.cpp (g++) and csrc/native/cuda/*.cu (nvcc), each registering itself at
// static-initialisation time:
//
//   // native/stubs.h              OP_DECLARE_STUB(add_stub, void(TensorIteratorBase&, const Scalar&));
//   // native/cpu/binary_kernels.cpp   OP_REGISTER_STUB(add_stub, CPU, &add_kernel);
//   // native/cuda/binary_kernels.cu   OP_REGISTER_STUB(add_stub, CUDA, &add_kernel_cuda);
//   // native/binary_ops.cpp       add_stub(device_type(), *this, alpha);
//
// Devices other than CUDA (external backends emulated on the host here) use the CPU loop.
// Operator registration itself stays in the generated code; stubs only pick the loop.
#pragma once

#include <utility>

#include "core/device.h"
#include "core/error.h"

namespace op::native {

template <class Signature>
class DispatchStub;

template <class R, class... Args>
class DispatchStub<R(Args...)> {
 public:
  using Fn = R (*)(Args...);

  explicit constexpr DispatchStub(const char* name) : name_(name) {}

  void set(DeviceType device, Fn fn) { (device == DeviceType::CUDA ? cuda_ : cpu_) = fn; }

  Fn find(DeviceType device) const { return device == DeviceType::CUDA ? cuda_ : cpu_; }

  template <class... CallArgs>
  R operator()(DeviceType device, CallArgs&&... args) const {
    Fn fn = find(device);
    OP_CHECK(fn != nullptr, name_, ": no ", device_type_name(device),
             " kernel in this build (build with CUDA support: scons --cuda=on)");
    return fn(std::forward<CallArgs>(args)...);
  }

 private:
  const char* name_;
  Fn cpu_ = nullptr;
  Fn cuda_ = nullptr;
};

}  // namespace op::native

// A stub is an inline variable declared once, in a header: every translation unit shares the one
// object, and its constexpr constructor makes it constant-initialised, so it exists before any
// registration runs. Each device's kernel file registers with a namespace-scope static, which
// runs when the library loads. Variadic: a signature may contain commas.
#define OP_DECLARE_STUB(NAME, ...) inline ::op::native::DispatchStub<__VA_ARGS__> NAME(#NAME)
#define OP_REGISTER_STUB(NAME, DEVICE, FN)                                                   \
  static const bool NAME##_##DEVICE##_registered = [] {                                      \
    ::op::native::NAME.set(::op::DeviceType::DEVICE, FN);                                    \
    return true;                                                                             \
  }()
