// A Python object held by C++ code that may drop it on a thread without the GIL (the autograd
// engine runs nodes and hooks with the GIL released): the last reference takes the GIL to
// release it.
#pragma once

#include <memory>

#include <pybind11/pybind11.h>

namespace opy {

namespace py = pybind11;

inline std::shared_ptr<py::object> held_object(py::object obj) {
  return std::shared_ptr<py::object>(new py::object(std::move(obj)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

}  // namespace opy
