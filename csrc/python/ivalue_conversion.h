// Python values <-> IValues, driven by the schema type of the argument or result:
// to_ivalue() checks and converts one Python object for a Type (Tensor, Tensor?, Tensor[],
// Tensor?[], int/SymInt/DeviceIndex, float, bool, str, Scalar, Scalar[] (numbers), int[] (or one
// int for int[N]), float[], bool[], ScalarType, Layout/MemoryFormat/QScheme (ints), Device,
// Generator, Storage, Stream, Dimname (a str) and Dimname[], and optionals of those);
// to_python() converts a boxed value back.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "core/ivalue.h"
#include "dispatch/schema_type.h"

namespace opy {

namespace py = pybind11;

// The Python dtype objects (opdispatch.float32, ...): one instance per ScalarType.
struct DType {
  op::ScalarType type;
};
py::object dtype_object(op::ScalarType type);  // the singleton; set up by init_dtypes()
// " (valid dtypes: ...)" for a value given where a dtype belongs; names the closest to a misspelt str.
std::string dtype_mismatch_detail(py::handle given);

// Converts `obj` for an argument or result of type `type`. Returns false, with `why` saying
// what was expected and what was given ("int[2], not str"), when it does not fit.
bool to_ivalue(py::handle obj, const op::Type& type, op::IValue& out, std::string& why);

// The Python value of a boxed value; `type`, when given, refines it (an int for a float
// argument becomes a Python float).
py::object to_python(const op::IValue& value, const op::Type* type = nullptr);

// A Scalar as the Python number of its kind: bool, int or float.
py::object scalar_object(const op::Scalar& s);

// type(obj).__name__, for messages.
std::string python_type_name(py::handle obj);

}  // namespace opy
