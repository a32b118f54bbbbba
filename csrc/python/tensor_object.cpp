#include "python/tensor_object.h"

#include <pybind11/detail/type_caster_base.h>

namespace opy {

namespace {

// Set once at import (module init runs under the GIL, before any call).
const py::detail::type_info* g_tensor_info = nullptr;

}  // namespace

void init_tensor_type() { g_tensor_info = py::detail::get_type_info(typeid(op::TensorBase), /*throw_if_missing=*/true); }

const op::TensorBase* as_tensor(py::handle obj) {
  PyTypeObject* type = Py_TYPE(obj.ptr());
  if (type != g_tensor_info->type && !PyType_IsSubtype(type, g_tensor_info->type)) return nullptr;
  auto* inst = reinterpret_cast<py::detail::instance*>(obj.ptr());
  py::detail::value_and_holder vh = inst->get_value_and_holder(g_tensor_info, /*throw_if_missing=*/false);
  return vh ? static_cast<const op::TensorBase*>(vh.value_ptr()) : nullptr;
}

py::object wrap_tensor(op::TensorBase t) {
  if (!t.defined()) return py::none();
  auto* owned = new op::TensorBase(std::move(t));
  py::handle h = py::detail::type_caster_generic::cast(owned, py::return_value_policy::take_ownership, py::handle(),
                                                       g_tensor_info, nullptr, nullptr);
  if (!h) {
    delete owned;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(h);
}

}  // namespace opy
