// The hot path between op::Tensor and its Python objects: every operator call converts its
// tensor arguments and results, so the pybind11 type lookups are done once, at import.
#pragma once

#include <pybind11/pybind11.h>

#include "core/tensor.h"

namespace opy {

namespace py = pybind11;

// Call once, after opdispatch.Tensor is registered.
void init_tensor_type();
// The tensor an opdispatch.Tensor object holds, or nullptr for anything else.
const op::TensorBase* as_tensor(py::handle obj);
// A new opdispatch.Tensor object; None for an undefined tensor.
py::object wrap_tensor(op::TensorBase t);

}  // namespace opy
