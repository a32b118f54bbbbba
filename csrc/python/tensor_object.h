// The hot path between op::TensorBase and its Python objects: every operator call converts its
// tensor arguments and results, so the pybind11 type lookups are done once, at import.
#pragma once

#include <pybind11/pybind11.h>

#include "core/tensor.h"

namespace opy {

namespace py = pybind11;

// Call once, after opdispatch.TensorBase is registered.
void init_tensor_type();
// The tensor an opdispatch.TensorBase object holds, or nullptr for anything else.
const op::TensorBase* as_tensor(py::handle obj);
// A new opdispatch.TensorBase object; None for an undefined tensor.
py::object wrap_tensor(op::TensorBase t);

}  // namespace opy
