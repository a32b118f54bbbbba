// opdispatch._C: the Python bindings of the dispatcher runtime. The pure-Python package
// (opdispatch/*.py) builds the public API on top of these names.
#include "core/error.h"
#include "python/bindings.h"

namespace opy { void init_cuda(py::module_& m); }  // cuda_bindings.cpp: _cuda_is_available, ...

PYBIND11_MODULE(_C, m) {
  m.doc() = "opdispatch runtime bindings (use the opdispatch package, not this module)";
  // Every runtime failure (missing kernel, conflicting registration, bad value) is an
  // op::Error; Python sees opdispatch.Error, a RuntimeError.
  pybind11::register_exception<op::Error>(m, "Error", PyExc_RuntimeError);
  opy::init_dtypes(m);
  opy::init_generator(m);
  opy::init_tensor(m);
  opy::init_runtime_types(m);  // Tensor.untyped_storage goes on the Tensor class init_tensor made
  opy::init_autograd(m);  // Tensor.requires_grad, .grad, ... go on the Tensor class init_tensor made
  opy::init_hooks(m);  // on the Tensor and Node classes init_autograd made
  opy::init_function(m);  // _FunctionNode derives from the Node class init_autograd made
  opy::init_dispatcher(m);
  opy::init_operators(m);
  opy::init_library(m);
  opy::init_cuda(m);
  opy::init_functionalization(m);
  opy::init_recording(m);
}
