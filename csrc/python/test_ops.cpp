// C++ kernels for tests and benchmarks, registered on request: _register_test_ops(ns) defines
// ns::add_one_element(Tensor a, Tensor b) -> Tensor with a real CPU kernel and returns the
// _Library that owns the registrations.
#include <memory>
#include <string>

#include "core/error.h"
#include "core/host_ops.h"
#include "core/tensor.h"
#include "dispatch/registration.h"
#include "python/bindings.h"

namespace opy {

namespace {

// Elementwise a + b for equal sizes, in the promoted dtype.
op::TensorBase add_one_element(const op::TensorBase& a, const op::TensorBase& b) {
  OP_CHECK(a.sizes() == b.sizes(), "add_one_element: sizes ", op::str_list(a.sizes()), " and ", op::str_list(b.sizes()),
           " differ");
  const op::ScalarType type = op::promote_types(a.dtype(), b.dtype());
  op::TensorBase out = op::TensorBase::empty(a.sizes(), op::TensorOptions(type).with_device(a.device()));
  const op::TensorBase x = op::host::contiguous(op::host::to(a, type)), y = op::host::contiguous(op::host::to(b, type));
  const int64_t n = out.numel();
  OP_DISPATCH_ALL_TYPES(type, "add_one_element", {
    const scalar_t* p = x.data_ptr<scalar_t>();
    const scalar_t* q = y.data_ptr<scalar_t>();
    scalar_t* r = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) r[i] = static_cast<scalar_t>(p[i] + q[i]);
  });
  return out;
}

}  // namespace

void init_test_ops(py::module_& m) {
  m.def("_register_test_ops", [](const std::string& ns) {
    auto lib = std::make_unique<op::Library>(op::Library::FRAGMENT, ns);
    lib->def("add_one_element(Tensor a, Tensor b) -> Tensor");
    lib->impl("add_one_element", op::DispatchKey::CPU, op::KernelFunction::make<&add_one_element>(),
              "add_one_element (C++)");
    return lib;
  }, py::arg("ns") = "test", "Registers the C++ test operators; keep the returned library to keep them.");
}

}  // namespace opy
