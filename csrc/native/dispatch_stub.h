// Device kernels behind one operator implementation. A structured operator's impl() is written
// once, device-generic, in csrc/native/*.cpp and calls a stub; the loops live per device in
// csrc/native/cpu/*.cpp (g++) and csrc/native/cuda/*.cu (nvcc), each defining its stub's loop
// pointer for its device:
//
//   // native/stubs.h              OP_DECLARE_STUB(add_stub, void(TensorIteratorBase&, const Scalar&));
//   // native/cpu/binary_kernels.cpp   OP_REGISTER_STUB(add_stub, CPU, &add_kernel);
//   // native/cuda/binary_kernels.cu   OP_REGISTER_STUB(add_stub, CUDA, &add_kernel_cuda);
//   // native/binary_ops.cpp       add_stub(device_type(), *this, alpha);
//
// Devices other than CUDA (external backends emulated on the host here) use the CPU loop.
// Operator registration itself stays in the generated code; stubs only pick the loop.
//
// A loop is reachable only through its stub. Each (stub, device) has one constant function
// pointer, `op_stub_loop_<stub>_<DEVICE>` (C linkage, so the loop files define it from their own
// namespaces; hidden, so it is no export of the library), which OP_REGISTER_STUB defines and the
// stub's find() reads: no static initializer registers anything. The only references to a loop
// are from the code calling its stub, so the linker's garbage collection (--gc-sections) drops
// the loops of the stubs no kept kernel calls (a selective build's left-out operators). A device
// without a loop (CUDA in a build without it) reads the weak null definition that
// native/dispatch_stub.cpp gives every pointer: a strong definition replaces it at link time,
// and no reference is left undefined (gold mis-resolves undefined weak hidden symbols).
// On the hot path a call is one load of the pointer.
#pragma once

#include <utility>

#include "core/device.h"
#include "core/error.h"

namespace op::native {

template <class Signature>
using StubFn = Signature*;

// `Loops` reads the stub's pointers: name(), cpu(), cuda() (OP_DECLARE_STUB writes it).
template <class Loops, class Signature>
class DispatchStub;

template <class Loops, class R, class... Args>
class DispatchStub<Loops, R(Args...)> {
 public:
  using Fn = R (*)(Args...);

  static Fn find(DeviceType device) { return device == DeviceType::CUDA ? Loops::cuda() : Loops::cpu(); }

  template <class... CallArgs>
  R operator()(DeviceType device, CallArgs&&... args) const {
    Fn fn = find(device);
    OP_CHECK(fn != nullptr, Loops::name(), ": no ", device_type_name(device),
             " kernel in this build (build with CUDA support: scons --cuda=on)");
    return fn(std::forward<CallArgs>(args)...);
  }
};

}  // namespace op::native

#define OP_STUB_LOOP(NAME, DEVICE) op_stub_loop_##NAME##_##DEVICE
#define OP_STUB_LOOP_VISIBILITY __attribute__((visibility("hidden")))
// native/dispatch_stub.cpp defines OP_STUB_NULL_LOOPS before it includes native/stubs.h: there,
// each stub's declaration also defines its pointers, weak and null.
#ifdef OP_STUB_NULL_LOOPS
#define OP_STUB_NULL_LOOP(NAME, DEVICE, ...)                                                 \
  extern "C" __attribute__((weak)) OP_STUB_LOOP_VISIBILITY ::op::native::StubFn<__VA_ARGS__> \
      const OP_STUB_LOOP(NAME, DEVICE) = nullptr;
#else
#define OP_STUB_NULL_LOOP(NAME, DEVICE, ...)
#endif

// A stub is a constant of an empty class per stub (internal linkage: no object, no symbol) whose
// find() reads the two pointers. Variadic: a signature may contain commas.
#define OP_DECLARE_STUB(NAME, ...)                                                                          \
  extern "C" {                                                                                            \
  extern OP_STUB_LOOP_VISIBILITY ::op::native::StubFn<__VA_ARGS__> const OP_STUB_LOOP(NAME, CPU);          \
  extern OP_STUB_LOOP_VISIBILITY ::op::native::StubFn<__VA_ARGS__> const OP_STUB_LOOP(NAME, CUDA);         \
  }                                                                                                       \
  OP_STUB_NULL_LOOP(NAME, CPU, __VA_ARGS__)                                                               \
  OP_STUB_NULL_LOOP(NAME, CUDA, __VA_ARGS__)                                                              \
  struct NAME##_loops {                                                                                   \
    using Fn = ::op::native::StubFn<__VA_ARGS__>;                                                         \
    static const char* name() { return #NAME; }                                                           \
    static Fn cpu() { return OP_STUB_LOOP(NAME, CPU); }                                                   \
    static Fn cuda() { return OP_STUB_LOOP(NAME, CUDA); }                                                 \
  };                                                                                                      \
  constexpr ::op::native::DispatchStub<NAME##_loops, __VA_ARGS__> NAME {}
// A device's loop for a stub, at namespace scope in any namespace (the pointer has C linkage).
#define OP_REGISTER_STUB(NAME, DEVICE, FN) \
  extern "C" OP_STUB_LOOP_VISIBILITY const ::op::native::NAME##_loops::Fn OP_STUB_LOOP(NAME, DEVICE) = FN
