// tp_call for pybind11 classes whose objects are called on every operator call (_Operator,
// _OpPacket, _OverloadSet): straight through the type slot, with no pybind11 overload dispatch
// and no copies of args/kwargs. T needs `py::object call(PyObject* args, PyObject* kwargs)`.
#pragma once

#include <pybind11/pybind11.h>

namespace opy {

namespace py = pybind11;

template <class T>
PyObject* call_slot(PyObject* self, PyObject* args, PyObject* kwargs) {
  try {
    auto* target = static_cast<T*>(reinterpret_cast<py::detail::instance*>(self)->get_value_and_holder().value_ptr());
    if (target == nullptr) {  // e.g. Type.__new__(Type) without __init__
      PyErr_Format(PyExc_TypeError, "%s object is not initialised", Py_TYPE(self)->tp_name);
      return nullptr;
    }
    return target->call(args, kwargs).release().ptr();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

// Call after the class's methods are defined; other slots may be set before it.
template <class T>
void install_call_slot(const py::class_<T>& cls) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  type->tp_call = &call_slot<T>;
  PyType_Modified(type);
}

}  // namespace opy
