// opdispatch.Storage and opdispatch.Stream: the Python objects for schemas' `Storage` and
// `Stream` arguments (set_.source_Storage, record_stream), and Tensor.untyped_storage().
// A Storage object is a handle on the memory behind tensors: two compare equal when they hold
// the same memory. A Stream is a device and a stream id (core/stream.h).
#include <pybind11/pybind11.h>

#include <cstdint>
#include <functional>
#include <string>

#include "core/device.h"
#include "core/storage.h"
#include "core/stream.h"
#include "core/tensor.h"
#include "python/bindings.h"

namespace opy {

void init_runtime_types(py::module_& m) {
  py::class_<op::Storage>(m, "Storage", "The memory behind tensors (Tensor.untyped_storage()); equal when it is the same memory.")
      .def_property_readonly("nbytes", &op::Storage::nbytes)
      .def_property_readonly("device", [](const op::Storage& s) { return s.device().str(); })
      .def("data_ptr", [](const op::Storage& s) { return reinterpret_cast<uintptr_t>(s.data()); })
      .def("__eq__", [](const op::Storage& a, const op::Storage& b) { return a.is_alias_of(b); }, py::is_operator())
      .def("__hash__", [](const op::Storage& s) { return std::hash<const void*>()(s.data()); })
      .def("__repr__", [](const op::Storage& s) {
        return "opdispatch.Storage(nbytes=" + std::to_string(s.nbytes()) + ", device='" + s.device().str() + "')";
      });

  py::class_<op::Stream>(m, "Stream", "A device's queue of work: a device and a stream id (0: the default stream).")
      .def(py::init([](const std::string& device, int64_t id) { return op::Stream(op::Device(device), id); }),
           py::arg("device") = "cpu", py::arg("id") = 0)
      .def_property_readonly("device", [](const op::Stream& s) { return s.device().str(); })
      .def_property_readonly("id", &op::Stream::id)
      .def("__eq__", [](const op::Stream& a, const op::Stream& b) { return a == b; }, py::is_operator())
      .def("__hash__", [](const op::Stream& s) { return std::hash<std::string>()(s.str()); })
      .def("__repr__", [](const op::Stream& s) {
        return "opdispatch.Stream(device='" + s.device().str() + "', id=" + std::to_string(s.id()) + ")";
      });

  auto tensor = py::reinterpret_borrow<py::class_<op::TensorBase>>(m.attr("Tensor"));
  tensor.def("untyped_storage", [](const op::TensorBase& t) { return t.storage(); },
             "The Storage this tensor views (shared by all its views).");
}

}  // namespace opy
