// Kernels for Python registrations: a Python callable run as a boxed kernel or as a boxed
// backend fallback, and the built-in identity kernel tests register with fn=None.
#pragma once

#include <pybind11/pybind11.h>

#include "dispatch/kernel_function.h"

namespace opy {

namespace py = pybind11;

// fn(*positional, **keyword_only) -> result(s); with_keyset: fn(keyset, *positional, ...).
// Arguments arrive as Python objects converted by the schema; results are checked against it.
op::KernelFunction python_kernel(py::object fn, bool with_keyset);
// fn(op, keyset, *positional, **keyword_only) for every operator reaching the fallback's key.
op::KernelFunction python_fallback(py::object fn);
// Returns its first Tensor argument for Tensor results, else its first argument.
op::KernelFunction identity_kernel();

}  // namespace opy
