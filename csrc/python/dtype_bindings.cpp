// opdispatch.bool, int32, int64, float32, float64: one immutable object per ScalarType, so
// dtypes compare with == and `is`, hash, and print as "opdispatch.float32".
#include <array>
#include <string>

#include "python/bindings.h"
#include "python/ivalue_conversion.h"

namespace opy {

namespace {

constexpr std::array<op::ScalarType, op::kNumScalarTypes> kAll = {
    op::ScalarType::Bool, op::ScalarType::Int32, op::ScalarType::Int64, op::ScalarType::Float32,
    op::ScalarType::Float64};

// Leaked on purpose: the objects must outlive any static destructor that might look them up.
std::array<py::object, op::kNumScalarTypes>& singletons() {
  static auto* objects = new std::array<py::object, op::kNumScalarTypes>();
  return *objects;
}

// The dtype name closest to a misspelt string ("flaot32", "Float32"), or "" when none is close.
std::string closest_dtype_name(py::handle given) {
  py::list names;
  for (op::ScalarType t : kAll) names.append(op::to_string(t));
  try {
    py::object lowered = given.attr("lower")();
    py::list close = py::module_::import("difflib").attr("get_close_matches")(lowered, names, 1);
    return close.empty() ? std::string() : close[0].cast<std::string>();
  } catch (const py::error_already_set&) {
    return {};  // only a hint; the list of valid dtypes follows anyway
  }
}

}  // namespace

py::object dtype_object(op::ScalarType type) { return singletons()[static_cast<size_t>(type)]; }

std::string dtype_mismatch_detail(py::handle given) {
  std::string valid;
  for (op::ScalarType t : kAll) valid += (valid.empty() ? "" : ", ") + std::string("opdispatch.") + op::to_string(t);
  std::string detail = "valid dtypes: " + valid;
  if (py::isinstance<py::str>(given)) {
    const std::string name = closest_dtype_name(given);
    const std::string shown = py::repr(given).cast<std::string>();  // repr: safe for any str
    if (!name.empty() && shown == "'" + name + "'")
      detail = "pass opdispatch." + name + ", not the string " + shown + "; " + detail;
    else if (!name.empty())
      detail = shown + " is no dtype; did you mean opdispatch." + name + "? " + detail;
    else
      detail = shown + " is no dtype; " + detail;
  }
  return " (" + detail + ")";
}

void init_dtypes(py::module_& m) {
  py::class_<DType>(m, "dtype", "An element type: opdispatch.bool, int32, int64, float32 or float64.")
      .def_property_readonly("name", [](const DType& d) { return op::to_string(d.type); })
      .def_property_readonly("itemsize", [](const DType& d) { return op::element_size(d.type); })
      .def_property_readonly("is_floating_point", [](const DType& d) { return op::is_floating(d.type); })
      .def("__repr__", [](const DType& d) { return std::string("opdispatch.") + op::to_string(d.type); })
      .def("__str__", [](const DType& d) { return std::string("opdispatch.") + op::to_string(d.type); })
      .def("__eq__", [](const DType& a, py::object b) {
        return py::isinstance<DType>(b) && b.cast<const DType&>().type == a.type;
      })
      .def("__hash__", [](const DType& d) { return static_cast<int>(d.type) + 0x6470; })
      // Pickles as a reference to the singleton (opdispatch._C.<name>).
      .def("__reduce__", [](const DType& d) { return op::to_string(d.type); });
  m.def("_dtype_mismatch_detail", [](py::handle given) { return dtype_mismatch_detail(given); },
        "Why a value is no dtype, for messages: ' (valid dtypes: ...)', naming the closest to a misspelt str.");
  for (op::ScalarType t : kAll) {
    py::object obj = py::cast(DType{t});
    singletons()[static_cast<size_t>(t)] = obj;
    m.attr(op::to_string(t)) = obj;
  }
}

}  // namespace opy
