// The parts of the opdispatch._C extension; module.cpp calls each init_* once.
#pragma once

#include <string>

#include <pybind11/pybind11.h>

#include "core/dispatch_key.h"

namespace opy {

namespace py = pybind11;

// A dispatch key by name ("CPU", "AutogradCPU", ...); an unknown name raises ValueError.
op::DispatchKey parse_key(const std::string& name);

void init_dtypes(py::module_& m);      // dtype_bindings.cpp: opdispatch.float32, ...
void init_tensor(py::module_& m);      // tensor_bindings.cpp: Tensor, numpy interop, factories
void init_autograd(py::module_& m);   // autograd_bindings.cpp: Tensor.requires_grad, .grad, nodes, grad mode
void init_hooks(py::module_& m);      // hook_bindings.cpp: register_hook, retain_grad, node hooks (after init_autograd)
void init_function(py::module_& m);   // function_bindings.cpp: custom autograd Functions' node (after init_autograd)
void init_operators(py::module_& m);   // operator_bindings.cpp: calling operators
void init_library(py::module_& m);     // library_bindings.cpp: Library, Python kernels
void init_dispatcher(py::module_& m);  // dispatcher_bindings.cpp: introspection, key sets, guards
void init_functionalization(py::module_& m);  // functionalization_bindings.cpp: functional tensors, traces
void init_generator(py::module_& m);   // generator_bindings.cpp: Generator, manual_seed
void init_runtime_types(py::module_& m);  // runtime_type_bindings.cpp: Storage, Stream (after init_tensor)
void init_recording(py::module_& m);    // recording_bindings.cpp: _OperatorRecorder (record_operators)

}  // namespace opy
