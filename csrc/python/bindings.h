// The parts of the opdispatch._C extension; module.cpp calls each init_* once.
#pragma once

#include <pybind11/pybind11.h>

namespace opy {

namespace py = pybind11;

void init_dtypes(py::module_& m);      // dtype_bindings.cpp: opdispatch.float32, ...
void init_tensor(py::module_& m);      // tensor_bindings.cpp: TensorBase, numpy interop, factories
void init_operators(py::module_& m);   // operator_bindings.cpp: calling operators
void init_library(py::module_& m);     // library_bindings.cpp: Library, Python kernels
void init_dispatcher(py::module_& m);  // dispatcher_bindings.cpp: introspection, key sets, guards
void init_test_ops(py::module_& m);    // test_ops.cpp: C++ kernels for tests and benchmarks
void init_generator(py::module_& m);   // generator_bindings.cpp: Generator, manual_seed

}  // namespace opy
