// opdispatch.bool, int32, int64, float32, float64: one immutable object per ScalarType, so
// dtypes compare with == and `is`, hash, and print as "opdispatch.float32".
#include <array>

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

}  // namespace

py::object dtype_object(op::ScalarType type) { return singletons()[static_cast<size_t>(type)]; }

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
  for (op::ScalarType t : kAll) {
    py::object obj = py::cast(DType{t});
    singletons()[static_cast<size_t>(t)] = obj;
    m.attr(op::to_string(t)) = obj;
  }
}

}  // namespace opy
